// Command provider serves the DNS provider of package provider on a local
// address: the external system of the DNSRecord example, as `make
// demo-external` runs it.
//
//	go run ./examples/dnsrecord/cmd/provider -addr 127.0.0.1:8053 -token s3cret
//
// It prints "listening on http://<addr>" once it accepts connections (with
// -addr 127.0.0.1:0 the port is chosen by the system) and serves until
// SIGINT or SIGTERM. The /admin/ endpoints have no authentication: keep the
// address on loopback.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kopgo/kopgo/examples/dnsrecord/provider"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8053", "address to listen on (port 0: any free port)")
	tokens := flag.String("token", "", "accepted bearer tokens, comma-separated (required; change them at run time with PUT /admin/tokens)")
	flag.Parse()
	if err := run(*addr, strings.Split(*tokens, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "provider:", err)
		os.Exit(1)
	}
}

func run(addr string, tokens []string) error {
	if strings.Join(tokens, "") == "" {
		return errors.New("-token is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: provider.NewServer(provider.Options{Tokens: tokens}), ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// Command demo is `make demo-external`: it starts a local control plane
// (etcd and kube-apiserver, built from the Go module proxy into bin/), the
// example's DNS provider in-process, installs the DNSRecord CRD and the
// operator's generated RBAC, runs the DNSRecord operator as a user bound
// only to that RBAC with a 3 s drift period, and walks a DNSRecord's life
// with the provider's view beside the cluster's (package demo). It stops
// everything it started and exits 0, or exits 1 naming the expectation
// that was not met.
//
//	go run ./examples/dnsrecord/cmd/demo
package main

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kopgo/kopgo/examples/dnsrecord"
	"github.com/kopgo/kopgo/examples/dnsrecord/demo"
	"github.com/kopgo/kopgo/examples/dnsrecord/operator"
	"github.com/kopgo/kopgo/examples/dnsrecord/provider"
	"github.com/kopgo/kopgo/test/testkit"
)

func main() {
	// The operator's own logs would drown the walkthrough; its outcomes
	// show in the DNSRecord's status and events instead.
	ctrl.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "\ndemo failed:", err)
		os.Exit(1)
	}
}

const (
	operatorUser = "dnsrecord-operator"
	period       = 3 * time.Second
)

func run(ctx context.Context, out io.Writer) error {
	begin := time.Now()
	say := func(format string, args ...any) { _, _ = fmt.Fprintf(out, format+"\n", args...) }
	say("==> Starting a local control plane (etcd, kube-apiserver) and the DNS provider")
	crds, err := dnsrecord.CRDs()
	if err != nil {
		return err
	}
	cluster, err := testkit.Start(ctx, testkit.Options{CRDs: crds, Scheme: operator.Scheme()})
	if err != nil {
		return err
	}
	defer func() {
		cluster.Stop()
		say("\n==> Stopped the control plane and the provider; %s removed", cluster.Dir)
	}()
	p := provider.NewServer(provider.Options{Tokens: []string{demo.Token}})
	srv := httptest.NewServer(p)
	defer srv.Close()
	say("    ready in %s; provider at %s", time.Since(begin).Round(100*time.Millisecond), srv.URL)

	if err := demo.Install(ctx, cluster.Client(), operatorUser); err != nil {
		return err
	}
	cfg, err := cluster.UserConfig(operatorUser)
	if err != nil {
		return err
	}
	say("==> Running the DNSRecord operator as %q (bound only to config/rbac), drift period %s\n", operatorUser, period)
	opctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- operator.Builder(operator.Options{ProviderURL: srv.URL, Period: period}).Config(cfg).Run(opctx)
	}()
	werr := demo.Walkthrough(ctx, cluster.Client(), p, "demo", "dnsrecord", period, out)
	cancel()
	if err := <-done; err != nil && werr == nil {
		werr = fmt.Errorf("operator: %w", err)
	}
	if werr != nil {
		return werr
	}
	say("\n==> Done in %s", time.Since(begin).Round(100*time.Millisecond))
	return nil
}

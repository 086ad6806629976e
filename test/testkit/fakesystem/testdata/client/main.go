// Command client creates one resource tagged "built" at the fake system
// whose URL is its first argument, then waits for SIGTERM: the smallest
// "operator" for the tests of fakesystem.Build.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, os.Args[1]+"/v1/resources", strings.NewReader(`{"tag": "built"}`))
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	_ = resp.Body.Close()
	fmt.Println("create:", resp.Status)
	<-ctx.Done()
}

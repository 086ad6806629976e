package demo_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kopgo/kopgo/examples/dnsrecord"
	"github.com/kopgo/kopgo/examples/dnsrecord/demo"
	"github.com/kopgo/kopgo/examples/dnsrecord/operator"
	"github.com/kopgo/kopgo/examples/dnsrecord/provider"
	"github.com/kopgo/kopgo/test/testkit"
)

// The walkthrough of `make demo-external`, with the operator bound only to
// its generated RBAC: a missing rule fails a step.
func TestWalkthrough(t *testing.T) {
	crds, err := dnsrecord.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := testkit.Start(t.Context(), testkit.Options{CRDs: crds, Scheme: operator.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Stop)
	p := provider.NewServer(provider.Options{Tokens: []string{demo.Token}})
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	if err := demo.Install(t.Context(), cluster.Client(), "dnsrecord-operator"); err != nil {
		t.Fatal(err)
	}
	cfg, err := cluster.UserConfig("dnsrecord-operator")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	const period = 2 * time.Second
	go func() {
		done <- operator.Builder(operator.Options{ProviderURL: srv.URL, Period: period, Name: "dnsrecord-demo"}).Config(cfg).Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("operator: %v", err)
		}
	})
	var out strings.Builder
	if err := demo.Walkthrough(t.Context(), cluster.Client(), p, "demo", "dnsrecord-demo", period, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log("\n" + out.String())
	for _, want := range []string{"Stalled=True SecretNotFound", "Stalled=True Unauthorized", "DriftCorrected", "observe success"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the walkthrough does not show %q", want)
		}
	}
}

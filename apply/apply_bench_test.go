package apply_test

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
)

// BenchmarkApplyUnchanged applies an unchanged ConfigMap over and over:
// controller-runtime's plain client.Apply (one request each time) against
// an Applier with a cache (none). Both report requests/op.
func BenchmarkApplyUnchanged(b *testing.B) {
	ns := cluster.Namespace(b)
	intent := configMapAC(ns, "bench", map[string]string{"k": "v"})
	b.Run("client.Apply", func(b *testing.B) {
		cfg, requests := counted()
		c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Apply(b.Context(), intent, client.FieldOwner(owner)); err != nil {
			b.Fatal(err)
		}
		requests.all.Store(0)
		b.ResetTimer()
		for b.Loop() {
			if err := c.Apply(b.Context(), intent, client.FieldOwner(owner)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(requests.all.Load())/float64(b.N), "requests/op")
	})
	b.Run("Applier-with-cache", func(b *testing.B) {
		informers := startCache(b)
		cfg, requests := counted()
		a, err := apply.New(cfg, owner, apply.WithScheme(cluster.Scheme()), apply.WithCache(informers))
		if err != nil {
			b.Fatal(err)
		}
		res, err := a.Apply(b.Context(), intent)
		if err != nil {
			b.Fatal(err)
		}
		waitCached(b, informers, cmKey(ns, "bench"), res.Object.GetResourceVersion())
		requests.all.Store(0)
		b.ResetTimer()
		for b.Loop() {
			res, err := a.Apply(b.Context(), intent)
			if err != nil {
				b.Fatal(err)
			}
			if res.Outcome != apply.Unchanged {
				b.Fatalf("outcome %s, want Unchanged", res.Outcome)
			}
		}
		b.ReportMetric(float64(requests.all.Load())/float64(b.N), "requests/op")
	})
}

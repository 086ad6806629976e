package apply_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
)

// BenchmarkApplyUnchanged applies an unchanged ConfigMap: kopgo's Applier
// with a cache against controller-runtime's plain Apply as the baseline.
func BenchmarkApplyUnchanged(b *testing.B) {
	ns := cluster.Namespace(b)
	intent := configMapAC(ns, "bench", map[string]string{"k": "v"})
	b.Run("baseline-client-apply", func(b *testing.B) {
		cfg, requests := counted()
		c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Apply(b.Context(), intent, client.FieldOwner(owner)); err != nil {
			b.Fatal(err)
		}
		requests.Store(0)
		b.ResetTimer()
		for range b.N {
			if err := c.Apply(b.Context(), intent, client.FieldOwner(owner)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(requests.Load())/float64(b.N), "requests/op")
	})
	b.Run("kopgo-applier-cached", func(b *testing.B) {
		informers := startCacheB(b)
		cfg, requests := counted()
		a, err := apply.New(cfg, owner, apply.WithScheme(cluster.Scheme()), apply.WithCache(informers))
		if err != nil {
			b.Fatal(err)
		}
		res, err := a.Apply(b.Context(), intent)
		if err != nil {
			b.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bench"}}
		for informers.Get(b.Context(), client.ObjectKeyFromObject(cm), cm) != nil || cm.ResourceVersion != res.Object.GetResourceVersion() {
			time.Sleep(10 * time.Millisecond) // until the cache has our write
		}
		requests.Store(0)
		b.ResetTimer()
		for range b.N {
			if _, err := a.Apply(b.Context(), intent); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(requests.Load())/float64(b.N), "requests/op")
	})
}

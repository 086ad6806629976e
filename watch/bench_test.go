package watch_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kopgo/kopgo/scope"
	"github.com/kopgo/kopgo/watch"
)

// BenchmarkEventsDelivery lists N ConfigMaps through Events and reports how
// fast the initial events arrive and the heap retained per cached object.
func BenchmarkEventsDelivery(b *testing.B) {
	const n = 1000
	ns := cluster.Namespace(b)
	c := cluster.Client()
	for i := range n {
		if err := c.Create(b.Context(), configMap(ns, fmt.Sprintf("cm-%04d", i), "some value", map[string]string{"app": "bench"})); err != nil {
			b.Fatal(err)
		}
	}
	wc, err := newBenchClient()
	if err != nil {
		b.Fatal(err)
	}
	var perObject float64
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		ctx, cancel := contextWithCancel(b)
		events, err := watch.Events[*corev1.ConfigMap](ctx, wc, scope.Namespaced(ns))
		if err != nil {
			b.Fatal(err)
		}
		for range n {
			<-events
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		perObject = float64(after.HeapAlloc-before.HeapAlloc) / n
		cancel()
		for range events {
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(perObject, "heapB/object")
}

package reconciler_test

import (
	"context"
	"testing"
	"time"

	"github.com/kopgo/kopgo/internal/sleep"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kopgo/kopgo/apply"
	"github.com/kopgo/kopgo/internal/childindex"
	"github.com/kopgo/kopgo/internal/loop"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/widget"
)

// BenchmarkSyncConverged reconciles a converged Widget with three children
// (two ConfigMaps and a Secret) over and over, through the Adapter, on a
// manager's cache with the controller index, as kopgo's Builder runs it:
// the cost of one no-op reconcile (0 requests, reported as requests/op).
func BenchmarkSyncConverged(b *testing.B) {
	ns := cluster.Namespace(b)
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: widget.WidgetSpec{Size: 1}}
	if err := cluster.Client().Create(b.Context(), w); err != nil {
		b.Fatal(err)
	}
	kinds := []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}}
	r := reconciler.Sync(kinds, func(_ context.Context, w *widget.Widget, _ reconciler.Children) ([]client.Object, reconciler.Action, error) {
		return []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.Name + "-a"}, Data: map[string]string{"k": "v"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.Name + "-b"}, Data: map[string]string{"k": "v"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: w.Name}, StringData: map[string]string{"k": "v"}},
		}, reconciler.Done(), nil
	})
	cfg, traffic := cluster.CountedConfig()
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:  cluster.Scheme(),
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{ns: {}},
			DefaultTransform:  apply.KeepManagedFields("bench"),
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := childindex.Add(b.Context(), mgr.GetCache(), r.ChildKinds()); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			b.Errorf("manager: %v", err)
		}
	}()
	b.Cleanup(func() { cancel(); <-done })
	if !mgr.GetCache().WaitForCacheSync(b.Context()) {
		b.Fatal("cache did not sync")
	}
	adapter := newBenchAdapter(b, mgr, r)
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)}
	// Converge: create the children, write status, let the cache catch up.
	for range 50 {
		if _, err := wake(b, adapter, req.NamespacedName); err != nil {
			b.Fatal(err)
		}
		traffic.Reset()
		if _, err := wake(b, adapter, req.NamespacedName); err != nil {
			b.Fatal(err)
		}
		if traffic.Requests.Load() == 0 {
			break
		}
		if err := sleep.For(b.Context(), 100*time.Millisecond); err != nil { // the cache sees the last writes
			b.Fatal(err)
		}
	}
	traffic.Reset()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		// A wake-up with something to look at: Sync runs (one with
		// nothing new would run nothing).
		if _, err := wake(b, adapter, req.NamespacedName); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(traffic.Requests.Load())/float64(b.N), "requests/op")
}

func newBenchAdapter(b *testing.B, mgr manager.Manager, r reconciler.Reconciler[*widget.Widget]) *loop.Loop[*widget.Widget] {
	b.Helper()
	env := envFromManager(b, mgr, "bench", nil)
	m, err := observability.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	a, err := loop.New[*widget.Widget]("bench", env, r, loop.Options{Metrics: m})
	if err != nil {
		b.Fatal(err)
	}
	return a
}

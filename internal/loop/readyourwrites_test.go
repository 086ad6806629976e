package loop_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kopgo/kopgo/internal/loop"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/widget"
)

// laggingClient reads as a cache that has not caught up does: while
// frozen, a Get answers with the object as it was when frozen.
type laggingClient struct {
	client.Client
	mu     sync.Mutex
	frozen *widget.Widget
}

func (c *laggingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.mu.Lock()
	f := c.frozen
	c.mu.Unlock()
	if w, ok := obj.(*widget.Widget); ok && f != nil {
		*w = *f.DeepCopy()
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c *laggingClient) freeze(w *widget.Widget) {
	c.mu.Lock()
	c.frozen = w
	c.mu.Unlock()
}

// A reconcile whose cached object predates the loop's own last write to
// it (the finalizer and the status the first Reconcile set) is deferred,
// without calling the reconciler, until the cache has caught up; then it
// runs on the object with that write. Before, the reconciler ran on the
// old object and minted a second external ID.
func TestReconcileWaitsForTheCacheToShowOurWrites(t *testing.T) {
	ns := cluster.Namespace(t)
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: widget.WidgetSpec{Size: 1}}
	if err := cluster.Client().Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	created := w.DeepCopy()
	lag := &laggingClient{Client: client.WithFieldOwner(cluster.Client(), "test-controller")}
	reg := prometheus.NewRegistry()
	m, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var minted atomic.Int32
	r := &mintingCleaner{minted: &minted}
	env := &reconciler.Env{Client: lag, Reader: cluster.Client(), Recorder: &observability.FakeRecorder{}, Scheme: cluster.Scheme()}
	l, err := loop.New[*widget.Widget]("ryw", env, r, loop.Options{Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)}
	if _, err := l.Reconcile(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if minted.Load() != 1 {
		t.Fatalf("first reconcile minted %d IDs", minted.Load())
	}
	// The cache still shows the object as created.
	lag.freeze(created)
	for i := range 3 {
		res, err := l.Reconcile(t.Context(), req)
		if err != nil || res.RequeueAfter <= 0 {
			t.Fatalf("reconcile %d on a cache older than our write: %+v, %v; want a short requeue", i+2, res, err)
		}
	}
	if n := minted.Load(); n != 1 {
		t.Errorf("the reconciler minted %d IDs; it ran on a cache older than our write", n)
	}
	if got := testutil.ToFloat64(mustCounter(reg, "kopgo_reconcile_deferred_total", "outcome", "deferred")); got != 3 {
		t.Errorf("deferrals counted %v, want 3", got)
	}
	// The cache catches up; the requeue the deferral asked for comes (the
	// queue would make the object due; here it is marked).
	lag.freeze(nil)
	l.MarkNews(req)
	if res, err := l.Reconcile(t.Context(), req); err != nil || res.RequeueAfter != 0 {
		t.Fatalf("reconcile after the cache caught up: %+v, %v", res, err)
	}
	if n := minted.Load(); n != 1 || r.calls.Load() != 2 {
		t.Errorf("minted %d IDs in %d calls; want 1 in 2 (the call after the cache caught up saw its ID)", n, r.calls.Load())
	}
}

// mintingCleaner mints an ID when the status has none, and has a Cleanup
// (so the loop adds its finalizer).
type mintingCleaner struct {
	minted *atomic.Int32
	calls  atomic.Int32
}

func (m *mintingCleaner) Reconcile(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	m.calls.Add(1)
	if w.Status.Phase == "" {
		m.minted.Add(1)
		w.Status.Phase = "ext-1"
	}
	return reconciler.Done(), nil
}

func (m *mintingCleaner) Cleanup(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
	return reconciler.Done(), nil
}

// A finalizer that cannot be added (the patch fails once) keeps the
// reconciler from running: nothing may be made that no cleanup would
// cover. The next reconcile adds it and runs the reconciler once.
func TestFailedFinalizerAddRunsNoReconcile(t *testing.T) {
	ns := cluster.Namespace(t)
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: widget.WidgetSpec{Size: 1}}
	if err := cluster.Client().Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	var failures atomic.Int32
	failures.Store(1)
	c := &failingPatch{Client: client.WithFieldOwner(cluster.Client(), "test-controller"), failures: &failures}
	m, err := observability.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	var minted atomic.Int32
	r := &mintingCleaner{minted: &minted}
	env := &reconciler.Env{Client: c, Reader: cluster.Client(), Recorder: &observability.FakeRecorder{}, Scheme: cluster.Scheme()}
	l, err := loop.New[*widget.Widget]("finalizer-fails", env, r, loop.Options{Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)}
	if _, err := l.Reconcile(t.Context(), req); err == nil {
		t.Fatal("first reconcile: no error, want the failed finalizer patch")
	}
	if n := r.calls.Load(); n != 0 {
		t.Fatalf("the reconciler ran %d times without its finalizer on", n)
	}
	l.MarkNews(req) // the retry the failure asked for
	if _, err := l.Reconcile(t.Context(), req); err != nil {
		t.Fatalf("second reconcile: %v", err)
	}
	var got widget.Widget
	if err := cluster.Client().Get(t.Context(), req.NamespacedName, &got); err != nil {
		t.Fatal(err)
	}
	if r.calls.Load() != 1 || minted.Load() != 1 || len(got.Finalizers) != 1 {
		t.Errorf("after the retry: %d calls, %d minted, finalizers %v; want 1, 1, the loop's", r.calls.Load(), minted.Load(), got.Finalizers)
	}
}

// failingPatch fails its JSON patches (the finalizer's) while failures
// is positive, as an API server answering 503 does.
type failingPatch struct {
	client.Client
	failures *atomic.Int32
}

func (f *failingPatch) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if patch.Type() == types.JSONPatchType && f.failures.Add(-1) >= 0 {
		return apierrors.NewServiceUnavailable("injected: etcd leader changed")
	}
	return f.Client.Patch(ctx, obj, patch, opts...)
}

package controller_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/widget"
)

// countingSync is a Sync reconciler that counts its reconciles (one per
// call of the loop that runs the user's code) and its sync function's
// calls, and reports in the parent's status what its last call observed.
type countingSync struct {
	*reconciler.Syncer[*widget.Widget]
	mu         sync.Mutex
	reconciles int
	calls      int
}

func newCountingSync() *countingSync {
	c := &countingSync{}
	c.Syncer = reconciler.Sync([]client.Object{&corev1.ConfigMap{}},
		func(_ context.Context, w *widget.Widget, observed reconciler.Children) ([]client.Object, reconciler.Action, error) {
			c.mu.Lock()
			c.calls++
			c.mu.Unlock()
			size := strconv.FormatInt(w.Spec.Size, 10)
			w.Status.Phase = "observed none"
			if cm, ok := reconciler.Find[*corev1.ConfigMap](observed, w.Name); ok {
				w.Status.Phase = "observed size " + cm.Data["size"]
			}
			return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.Name}, Data: map[string]string{"size": size}}},
				reconciler.Done(), nil
		})
	return c
}

func (c *countingSync) Reconcile(ctx context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
	c.mu.Lock()
	c.reconciles++
	c.mu.Unlock()
	return c.Syncer.Reconcile(ctx, w, env)
}

func (c *countingSync) counts() (reconciles, calls int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reconciles, c.calls
}

// A Sync parent costs one reconcile per new object and per change: the
// sync function sees the child it wrote in the same reconcile (a second
// call, with the child as the API server returned it), the parent's status
// is written once, and the watch events of the apply wake nothing.
// Before, the child's event ran a second reconcile, and the status showed
// what the first call observed (no child) until it did.
func TestSyncCostsOneReconcilePerChange(t *testing.T) {
	ns := cluster.Namespace(t)
	cfg, traffic := cluster.CountedConfig()
	c := newCountingSync()
	run(t, kopcontroller.New[*widget.Widget]("sync-once", c).Config(cfg).Scheme(scheme).
		Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	var w *widget.Widget
	for gen, size := range []int64{1, 2, 3} {
		r0, c0 := c.counts()
		w0 := traffic.Writes.Load()
		if gen == 0 {
			w = createWidget(t, ns, "w", ns)
		} else {
			cur := getWidget(t, w)
			cur.Spec.Size = size
			if err := cluster.Client().Update(t.Context(), cur); err != nil {
				t.Fatal(err)
			}
		}
		want := fmt.Sprintf("observed size %d", size)
		eventually(t, 30*time.Second, want, func() error {
			if got := getWidget(t, w); got.Status.Phase != want {
				return fmt.Errorf("status.phase %q", got.Status.Phase)
			}
			return nil
		})
		// Any reconcile the child's or the status write's events would
		// run comes within milliseconds of them.
		time.Sleep(2 * time.Second)
		r1, c1 := c.counts()
		if r1-r0 != 1 {
			t.Errorf("size %d: %d reconciles, want 1", size, r1-r0)
		}
		if c1-c0 != 2 {
			t.Errorf("size %d: %d calls of the sync function, want 2 (the second with the applied child)", size, c1-c0)
		}
		// The child's apply and one status write.
		if n := traffic.Writes.Load() - w0; n != 2 {
			t.Errorf("size %d: %d writes, want 2 (the child's apply, the status)", size, n)
		}
	}
}

// A second call of the sync function that writes (a child it could only
// ask for once it saw the first one as the API server returned it) is
// followed by one more reconcile, woken by that child's event: the sync
// function then sees every child it asked for, and the parent settles
// with nothing more written. Were the second call's writes taken for
// echoes as the first call's are, the status would show only the first
// child for good.
func TestSyncSecondCallThatWritesWakesTheParentOnce(t *testing.T) {
	ns := cluster.Namespace(t)
	var mu sync.Mutex
	reconciles, calls := 0, 0
	s := reconciler.Sync([]client.Object{&corev1.ConfigMap{}},
		func(_ context.Context, w *widget.Widget, observed reconciler.Children) ([]client.Object, reconciler.Action, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			want := []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.Name + "-a"}}}
			w.Status.Phase = "observed none"
			if a, ok := reconciler.Find[*corev1.ConfigMap](observed, w.Name+"-a"); ok {
				w.Status.Phase = "observed a"
				// b carries a's UID: known only once a exists.
				want = append(want, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.Name + "-b"}, Data: map[string]string{"a": string(a.UID)}})
				if _, ok := reconciler.Find[*corev1.ConfigMap](observed, w.Name+"-b"); ok {
					w.Status.Phase = "observed a and b"
				}
			}
			return want, reconciler.Done(), nil
		})
	counted := reconciler.Func[*widget.Widget](func(ctx context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
		mu.Lock()
		reconciles++
		mu.Unlock()
		return s.Reconcile(ctx, w, env)
	})
	counts := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return reconciles, calls
	}
	run(t, kopcontroller.New[*widget.Widget]("sync-second-writes", counted).Owns(&corev1.ConfigMap{}).Config(cluster.Config).Scheme(scheme).
		Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	w := createWidget(t, ns, "w", ns)
	eventually(t, 30*time.Second, "the status showing both children", func() error {
		if got := getWidget(t, w); got.Status.Phase != "observed a and b" {
			return fmt.Errorf("status.phase %q", got.Status.Phase)
		}
		return nil
	})
	// Settled: any reconcile the last writes' events would run comes
	// within milliseconds of them.
	time.Sleep(2 * time.Second)
	r1, c1 := counts()
	if r1 != 2 || c1 != 3 {
		t.Errorf("%d reconciles and %d calls of the sync function, want 2 and 3 (create a; see a, create b; see both)", r1, c1)
	}
	time.Sleep(2 * time.Second)
	if r2, c2 := counts(); r2 != r1 || c2 != c1 {
		t.Errorf("not settled: %d reconciles and %d calls 2 s later, had %d and %d", r2, c2, r1, c1)
	}
}

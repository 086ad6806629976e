package loop_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/loop"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/widget"
)

// churner fails each object's first Reconcile, succeeds after, and cleans
// up at once: every per-object map of the loop gets an entry per object.
type churner struct {
	mu       sync.Mutex
	calls    map[types.UID]int
	cleanups map[types.UID]int
}

func (c *churner) Reconcile(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[w.UID]++
	if c.calls[w.UID] == 1 {
		return reconciler.Done(), koperrors.Errorf(koperrors.Unavailable, "first attempt")
	}
	return reconciler.Done(), nil
}

func (c *churner) Cleanup(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cleanups[w.UID]++
	return reconciler.Done(), nil
}

// Create-delete cycles of one name: what the loop keeps per object goes
// with the object, and each deletion gets one Cleanup. Before, the failure
// streak outlived it (the next object of the same name started at failure
// 2), and the delete event, which often arrives before the answer to the
// finalizer's removal and still lists the finalizer, was taken for a
// deletion past the finalizer: a second Cleanup for about half of the
// objects, and their UIDs kept for 10 to 20 minutes.
// KOPGO_CHURN_CYCLES sets the number of cycles (default 200).
func TestPerObjectMemoryGoesWithTheObject(t *testing.T) {
	cycles := 200
	if s := os.Getenv("KOPGO_CHURN_CYCLES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		cycles = n
	}
	ns := cluster.Namespace(t)
	reg := observabilityRegistry(t)
	env := &reconciler.Env{Recorder: &observability.FakeRecorder{}, Scheme: cluster.Scheme()}
	mgr, err := manager.New(cluster.Config, manager.Options{
		Scheme: cluster.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	env.Client, env.Reader = client.WithFieldOwner(mgr.GetClient(), "churn"), mgr.GetAPIReader()
	c := &churner{calls: map[types.UID]int{}, cleanups: map[types.UID]int{}}
	l, err := loop.New[*widget.Widget]("churn", env, c, loop.Options{Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	never := predicate.NewPredicateFuncs(func(client.Object) bool { return false })
	deletes := predicate.Funcs{DeleteFunc: func(event.DeleteEvent) bool { return true },
		CreateFunc: func(event.CreateEvent) bool { return false }, UpdateFunc: func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false }}
	err = builder.ControllerManagedBy(mgr).Named("churn").For(&widget.Widget{}, builder.WithPredicates(never)).
		Watches(&widget.Widget{}, l.PrimaryHandler()).
		Watches(&widget.Widget{}, l.DeleteHandler(), builder.WithPredicates(deletes)).
		WithOptions(l.ControllerOptions(crcontroller.Options{SkipNameValidation: new(true)})).Complete(l)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	before := loop.Kept(l)
	start := time.Now()
	for i := range cycles {
		w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: widget.WidgetSpec{Size: 1}}
		if err := cluster.Client().Create(t.Context(), w); err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		waitFor(t, fmt.Sprintf("cycle %d: reconciled after its failure", i), func() error {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.calls[w.UID] < 2 {
				return fmt.Errorf("%d reconciles", c.calls[w.UID])
			}
			return nil
		})
		if err := cluster.Client().Delete(t.Context(), w); err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		waitFor(t, fmt.Sprintf("cycle %d: gone", i), func() error {
			err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(w), w)
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there (%w)", err)
		})
	}
	took := time.Since(start)
	waitFor(t, "the loop forgot every object", func() error {
		if diff := cmp.Diff(before, loop.Kept(l)); diff != "" {
			return fmt.Errorf("kept per object (-before +after):\n%s", diff)
		}
		return nil
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	for uid, n := range c.calls {
		if n != 2 {
			t.Errorf("object %s: %d reconciles, want 2 (a failure, then a success)", uid, n)
		}
		if m := c.cleanups[uid]; m != 1 {
			t.Errorf("object %s: %d cleanups for one deletion, want 1", uid, m)
		}
	}
	t.Logf("%d cycles in %s; kept after: %v", cycles, took.Round(time.Millisecond), loop.Kept(l))
}

func waitFor(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s: %v", what, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func observabilityRegistry(t *testing.T) *observability.Metrics {
	t.Helper()
	m, err := observability.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

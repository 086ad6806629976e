package controller_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/owners"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// Watch with a label mapper: a Secret labelled with a widget's name
// triggers that widget's reconcile; WithWatches adds a raw watch too.
func TestWatchAndWithWatches(t *testing.T) {
	ns := cluster.Namespace(t)
	const label = "example.com/widget"
	var byName atomic.Int32
	var rawHits atomic.Int32
	r := reconciler.Func[*widget.Widget](func(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
		if w.Name == "target" {
			byName.Add(1)
		}
		return reconciler.Done(), nil
	})
	run(t, kopcontroller.New[*widget.Widget]("widgets-watch", r).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).
		LabelSelector("watch="+ns).
		Watch(&corev1.Secret{}, owners.LabelMapper(label)).
		WithWatches(func(b *builder.Builder) {
			b.Watches(&corev1.ServiceAccount{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
				if o.GetNamespace() == ns {
					rawHits.Add(1)
				}
				return nil
			}))
		}))
	c := cluster.Client()
	if err := c.Create(t.Context(), &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "target", Labels: map[string]string{"watch": ns}}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "first reconcile", func() error { return atLeast(&byName, 1) })
	before := byName.Load()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s", Labels: map[string]string{label: "target"}}}
	if err := c.Create(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the labelled Secret triggers its widget", func() error { return atLeast(&byName, before+1) })
	if err := c.Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sa"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the raw watch sees the ServiceAccount", func() error { return atLeast(&rawHits, 1) })
}

// Concurrency(2) reconciles two objects at once: both are inside Reconcile
// at the same time.
func TestConcurrency(t *testing.T) {
	ns := cluster.Namespace(t)
	var inside, peak atomic.Int32
	r := reconciler.Func[*widget.Widget](func(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
		n := inside.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(500 * time.Millisecond)
		inside.Add(-1)
		return reconciler.Done(), nil
	})
	run(t, kopcontroller.New[*widget.Widget]("widgets-concurrency", r).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).
		LabelSelector("conc="+ns).Concurrency(2))
	for _, n := range []string{"a", "b"} {
		w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n, Labels: map[string]string{"conc": ns}}}
		if err := cluster.Client().Create(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "two reconciles at once", func() error { return atLeast(&peak, 2) })
}

// GracefulShutdown: a reconcile in flight when the context ends is allowed
// to finish; Run returns after it.
func TestGracefulShutdownLetsInFlightWorkFinish(t *testing.T) {
	ns := cluster.Namespace(t)
	var started, finished atomic.Int32
	r := reconciler.Func[*widget.Widget](func(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
		started.Add(1)
		time.Sleep(time.Second) // work that does not watch its context
		finished.Add(1)
		return reconciler.Done(), nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- kopcontroller.New[*widget.Widget]("widgets-shutdown", r).
			Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).
			LabelSelector("shutdown=" + ns).GracefulShutdown(10 * time.Second).Run(ctx)
	}()
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w", Labels: map[string]string{"shutdown": ns}}}
	if err := cluster.Client().Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "a reconcile in flight", func() error { return atLeast(&started, 1) })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
	}
	if finished.Load() != started.Load() {
		t.Errorf("%d reconciles started, %d finished before Run returned", started.Load(), finished.Load())
	}
}

func atLeast(v *atomic.Int32, n int32) error {
	if got := v.Load(); got < n {
		return fmt.Errorf("%d, want at least %d", got, n)
	}
	return nil
}

// A reconcile timeout cuts a slow reconcile; Ready=False says why.
func TestReconcileTimeout(t *testing.T) {
	ns := cluster.Namespace(t)
	r := reconciler.Func[*widget.Widget](func(ctx context.Context, _ *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
		<-ctx.Done()
		return reconciler.Done(), ctx.Err()
	})
	run(t, kopcontroller.New[*widget.Widget]("widgets-timeout", r).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).
		LabelSelector("timeout="+ns).ReconcileTimeout(300*time.Millisecond))
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "slow", Labels: map[string]string{"timeout": ns}}}
	if err := cluster.Client().Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "Ready=False with reason Timeout", func() error {
		var got widget.Widget
		if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(w), &got); err != nil {
			return err
		}
		if c := status.Get(&got, status.Ready); c == nil || c.Reason != "Timeout" || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("Ready = %+v", c)
		}
		return nil
	})
}

// WatcherConfig's field selector limits the primary watch in the cache.
func TestWatcherConfig(t *testing.T) {
	ns := cluster.Namespace(t)
	var seen sync.Map
	r := reconciler.Func[*widget.Widget](func(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
		seen.Store(w.Name, true)
		return reconciler.Done(), nil
	})
	run(t, kopcontroller.New[*widget.Widget]("widgets-watcher", r).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).
		WatcherConfig(cache.ByObject{Field: fields.OneTermEqualSelector("metadata.namespace", ns)}).
		LabelSelector("pick=yes"))
	for _, w := range []struct{ name, pick string }{{"picked", "yes"}, {"skipped", "no"}} {
		obj := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: w.name, Labels: map[string]string{"pick": w.pick}}}
		if err := cluster.Client().Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "the selected widget reconciled", func() error {
		if _, ok := seen.Load("picked"); !ok {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	time.Sleep(300 * time.Millisecond)
	if _, ok := seen.Load("skipped"); ok {
		t.Error("a widget outside the label selector was reconciled")
	}
	err := kopcontroller.New[*widget.Widget]("widgets-watcher-setup", r).WatcherConfig(cache.ByObject{}).Setup(nil)
	if err == nil || !strings.Contains(err.Error(), "WatcherConfig needs Run") {
		t.Errorf("Setup with WatcherConfig = %v", err)
	}
}

// Setup adds the controller to a manager the caller built and runs.
func TestSetupInExistingManager(t *testing.T) {
	ns := cluster.Namespace(t)
	mgr, err := manager.New(cluster.Config, manager.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	var reconciles atomic.Int32
	if err := kopcontroller.New[*widget.Widget]("widgets-setup", childMaker(&reconciles)).
		Recorder(&observability.FakeRecorder{}).LabelSelector("setup=" + ns).Setup(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w", Labels: map[string]string{"setup": ns}}}
	if err := cluster.Client().Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "reconciled by the Setup controller", func() error {
		var got widget.Widget
		if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(w), &got); err != nil {
			return err
		}
		if !status.IsTrue(&got, status.Ready) {
			return fmt.Errorf("not ready")
		}
		return nil
	})
}

// The reconciler's own status write, or anyone's status-only change, does
// not reconcile again; a label or spec change does.
func TestStatusOnlyUpdatesDoNotReconcile(t *testing.T) {
	ns := cluster.Namespace(t)
	var reconciles atomic.Int32
	run(t, kopcontroller.New[*widget.Widget]("widgets-status-only", reconciler.Func[*widget.Widget](
		func(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
			reconciles.Add(1)
			return reconciler.Done(), nil
		})).Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("status-only="+ns))

	c := cluster.Client()
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w", Labels: map[string]string{"status-only": ns}}}
	if err := c.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	settled := func(what string, want int32) {
		t.Helper()
		eventually(t, 30*time.Second, what, func() error {
			if n := reconciles.Load(); n != want {
				return fmt.Errorf("%d reconciles, want %d", n, want)
			}
			return nil
		})
		time.Sleep(time.Second) // nothing more arrives
		if n := reconciles.Load(); n != want {
			t.Fatalf("%s: %d reconciles, want %d", what, n, want)
		}
	}
	// One reconcile, which writes Ready=True: that write does not come back.
	settled("created", 1)
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(w), w); err != nil {
		t.Fatal(err)
	}
	if !status.IsTrue(w, status.Ready) {
		t.Fatalf("not Ready after the reconcile: %+v", w.Status)
	}

	// Someone else's status-only write.
	patch := client.MergeFrom(w.DeepCopyObject().(client.Object))
	w.Status.Phase = "elsewhere"
	if err := c.Status().Patch(t.Context(), w, patch); err != nil {
		t.Fatal(err)
	}
	settled("a status-only change", 1)

	patch = client.MergeFrom(w.DeepCopyObject().(client.Object))
	w.Labels["extra"] = "1"
	if err := c.Patch(t.Context(), w, patch); err != nil {
		t.Fatal(err)
	}
	settled("a label change", 2)

	patch = client.MergeFrom(w.DeepCopyObject().(client.Object))
	w.Spec.Size = 7
	if err := c.Patch(t.Context(), w, patch); err != nil {
		t.Fatal(err)
	}
	settled("a spec change", 3)
}

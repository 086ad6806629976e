package controller_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	kopcontroller "github.com/kopgo/kopgo/controller"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/finalizers"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// Where two features meet: a requeue on a ready object, a terminal error
// with a requeue, a terminal error inside a cleanup, an invalid object
// deleted, an object deleted under the reconcile's feet.

// A schedule-driven reconciler (a CronJob, a renewal) marks Ready and asks
// to come back: the object stays Ready=True, its lastTransitionTime never
// moves, and after the first reconcile no requeue writes status.
func TestRequeueKeepsReadyAndWritesNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	var calls atomic.Int32
	r := reconciler.Func[*widget.Widget](func(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
		calls.Add(1)
		status.MarkReady(w, "Scheduled", "next run in 1s")
		return reconciler.RequeueAfter(time.Second), nil
	})
	run(t, kopcontroller.New[*widget.Widget]("outcome-requeue", r).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	w := createWidget(t, ns, "cron", ns)
	eventually(t, 20*time.Second, "Ready=True", readyIs(t, w, metav1.ConditionTrue, "Scheduled"))
	first := getWidget(t, w)
	start := calls.Load()
	eventually(t, 20*time.Second, "5 more requeues", func() error { return atLeast(&calls, start+5) })
	got := getWidget(t, w)
	if got.ResourceVersion != first.ResourceVersion {
		t.Errorf("status written during the requeues: resourceVersion %s -> %s, conditions %+v", first.ResourceVersion, got.ResourceVersion, got.Status.Conditions)
	}
	before, after := status.Get(first, status.Ready), status.Get(got, status.Ready)
	if after == nil || after.Status != metav1.ConditionTrue || !after.LastTransitionTime.Equal(&before.LastTransitionTime) {
		t.Errorf("Ready after the requeues = %+v, want True with lastTransitionTime %v", after, before.LastTransitionTime)
	}
	if status.Get(got, status.Reconciling) != nil {
		t.Errorf("Reconciling set by a requeue: %+v", status.Get(got, status.Reconciling))
	}
}

// A child the API server refuses with a 422 naming a field makes the parent
// Stalled, and the schedule it asked for goes on: it is reconciled again
// after the delay, not only when it changes.
func TestTerminalFailureKeepsTheRequestedRequeue(t *testing.T) {
	ns := cluster.Namespace(t)
	var calls atomic.Int32
	r := reconciler.Func[*widget.Widget](func(ctx context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
		calls.Add(1)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name}, Data: map[string]string{"1 bad key": "x"}}
		return reconciler.RequeueAfter(time.Second), env.Client.Create(ctx, cm)
	})
	run(t, kopcontroller.New[*widget.Widget]("outcome-terminal-requeue", r).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	w := createWidget(t, ns, "cron", ns)
	eventually(t, 20*time.Second, "Stalled=True", func() error {
		if c := status.Get(getWidget(t, w), status.Stalled); c == nil || c.Status != metav1.ConditionTrue || c.Reason != "Invalid" {
			return fmt.Errorf("Stalled = %+v", c)
		}
		return nil
	})
	if n := attemptsDuring(t, &calls, 3500*time.Millisecond); n < 2 || n > 5 {
		t.Errorf("%d reconciles in 3.5 s of a Stalled object that asked for a requeue after 1 s, want about 3", n)
	}
}

// cleanupHook counts its calls and fails as told.
type cleanupHook struct {
	reconcileErr error
	// deleteAfter, when set, deletes each object from a goroutine its
	// first Reconcile starts, after deleteAfter(uid): a delete racing the
	// finalizer patch that follows the Reconcile.
	deleteAfter func(types.UID) time.Duration
	mu          sync.Mutex
	cleanupErr  error
	reconciled  map[types.UID]bool
	cleaned     map[types.UID]int
}

func newCleanupHook() *cleanupHook {
	return &cleanupHook{reconciled: map[types.UID]bool{}, cleaned: map[types.UID]int{}}
}

func (h *cleanupHook) Reconcile(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.deleteAfter != nil && !h.reconciled[w.UID] {
		obj := w.DeepCopyObject().(*widget.Widget)
		go func() {
			time.Sleep(h.deleteAfter(obj.UID))
			_ = cluster.Client().Delete(context.Background(), obj, client.Preconditions{UID: &obj.UID})
		}()
	}
	if h.reconcileErr == nil {
		h.reconciled[w.UID] = true
	}
	return reconciler.Done(), h.reconcileErr
}

func (h *cleanupHook) Cleanup(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cleaned[w.UID]++
	return reconciler.Done(), h.cleanupErr
}

func (h *cleanupHook) cleanups() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.cleaned {
		n += c
	}
	return n
}

// A Cleanup that fails terminally shows Stalled naming the finalizer that
// blocks deletion and the way out; removing that finalizer by hand lets
// the object go.
func TestTerminalCleanupShowsStalledAndCanBeUnblocked(t *testing.T) {
	ns := cluster.Namespace(t)
	h := newCleanupHook()
	h.cleanupErr = koperrors.Terminal(koperrors.Errorf(koperrors.Forbidden, "the external API refuses to delete record 42"))
	const fin = "widgets.example.com/external"
	run(t, kopcontroller.New[*widget.Widget]("outcome-terminal-cleanup", h).FinalizerName(fin).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	w := createWidget(t, ns, "w", ns)
	eventually(t, 20*time.Second, "the finalizer", func() error {
		if !finalizers.Has(getWidget(t, w), fin) {
			return errors.New("not yet")
		}
		return nil
	})
	if err := cluster.Client().Delete(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "Stalled naming the finalizer", func() error {
		c := status.Get(getWidget(t, w), status.Stalled)
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, fin) ||
			!strings.Contains(c.Message, "record 42") || !strings.Contains(c.Message, "remove "+fin+" from metadata.finalizers") {
			return fmt.Errorf("Stalled = %+v", c)
		}
		return nil
	})
	// The documented way out.
	if _, err := finalizers.Remove(t.Context(), cluster.Client(), getWidget(t, w), fin); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the object gone", func() error {
		err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(w), &widget.Widget{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("Get = %w", err)
		}
		return nil
	})
	// A reconcile already queued may still read the object from a cache
	// that has not seen the deletion (Cleanup may run more than once); after
	// that, nothing retries a cleanup the user gave up on.
	time.Sleep(time.Second)
	n := h.cleanups()
	time.Sleep(2 * time.Second)
	if h.cleanups() != n {
		t.Errorf("Cleanup kept running after the finalizer was removed by hand")
	}
}

// A parent whose spec is invalid from the start gets no finalizer, so it is
// deleted at once, without a Cleanup call.
func TestInvalidParentIsDeletedWithoutCleanup(t *testing.T) {
	ns := cluster.Namespace(t)
	h := newCleanupHook()
	h.reconcileErr = koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "spec.size: must be even"))
	run(t, kopcontroller.New[*widget.Widget]("outcome-invalid", h).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	w := createWidget(t, ns, "w", ns)
	eventually(t, 20*time.Second, "Stalled=True", func() error {
		if c := status.Get(getWidget(t, w), status.Stalled); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("Stalled = %+v", c)
		}
		return nil
	})
	if fins := getWidget(t, w).Finalizers; len(fins) != 0 {
		t.Fatalf("an invalid parent got finalizers %v", fins)
	}
	if err := cluster.Client().Delete(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(w), &widget.Widget{}); !apierrors.IsNotFound(err) {
		t.Errorf("after delete: Get = %v, want NotFound at once", err)
	}
	time.Sleep(500 * time.Millisecond)
	if n := h.cleanups(); n != 0 {
		t.Errorf("Cleanup ran %d times for an object that never had anything to clean up", n)
	}
}

// Objects deleted while (or right after) their first reconcile ran get
// their Cleanup, even when the API server deletes past the finalizer
// (kubernetes#77988) or the object goes before the finalizer is on: every
// object whose Reconcile succeeded is cleaned up once it is gone.
func TestEveryReconciledObjectIsCleanedUpUnderDeleteRaces(t *testing.T) {
	ns := cluster.Namespace(t)
	h := newCleanupHook()
	run(t, kopcontroller.New[*widget.Widget]("outcome-delete-race", h).Concurrency(8).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	// Half the widgets are deleted from their first Reconcile (racing the
	// finalizer patch that follows it), half right after they are created
	// (racing the first Reconcile itself).
	const n = 300
	var seq atomic.Int32
	h.deleteAfter = func(types.UID) time.Duration {
		return time.Duration(seq.Add(1)%12) * time.Millisecond
	}
	for i := range n / 2 {
		createWidget(t, ns, fmt.Sprintf("w%d", i), ns)
	}
	var wg sync.WaitGroup
	for i := range n / 2 {
		wg.Go(func() {
			w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("x%d", i), Labels: map[string]string{"loop": ns}}, Spec: widget.WidgetSpec{Size: 1}}
			if err := cluster.Client().Create(context.Background(), w); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Duration(i%40) * time.Millisecond)
			if err := cluster.Client().Delete(context.Background(), w); err != nil && !apierrors.IsNotFound(err) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	eventually(t, 60*time.Second, "every widget gone", widgetsGone(t, ns))
	eventually(t, 20*time.Second, "a cleanup for every reconciled widget", func() error {
		h.mu.Lock()
		defer h.mu.Unlock()
		missing := 0
		for uid := range h.reconciled {
			if h.cleaned[uid] == 0 {
				missing++
			}
		}
		if missing > 0 {
			return fmt.Errorf("%d of %d reconciled widgets never cleaned up", missing, len(h.reconciled))
		}
		return nil
	})
	h.mu.Lock()
	t.Logf("%d widgets, %d reconciled, %d cleaned up", n, len(h.reconciled), len(h.cleaned))
	h.mu.Unlock()
}

// A reconcile whose object is deleted under it, and that meets the
// deletion as a NotFound about the object itself, has not failed: no
// error is counted or logged, and no Warning event is recorded on the
// deleted object.
func TestObjectGoneMidReconcileIsNotAFailure(t *testing.T) {
	ns := cluster.Namespace(t)
	events := &observability.FakeRecorder{}
	var calls atomic.Int32
	r := reconciler.Func[*widget.Widget](func(ctx context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
		calls.Add(1)
		if err := cluster.Client().Delete(ctx, w.DeepCopyObject().(*widget.Widget)); err != nil {
			return reconciler.Done(), err
		}
		// The reconciler goes on and writes to its object, which is gone.
		w.Labels["touched"] = "yes"
		return reconciler.Done(), env.Client.Update(ctx, w)
	})
	const name = "outcome-gone"
	run(t, kopcontroller.New[*widget.Widget](name, r).
		Config(cluster.Config).Scheme(scheme).Recorder(events).LabelSelector("loop="+ns))
	createWidget(t, ns, "w", ns)
	eventually(t, 20*time.Second, "a reconcile", func() error { return atLeast(&calls, 1) })
	time.Sleep(500 * time.Millisecond)
	for _, e := range events.Events() {
		if e.Type == corev1.EventTypeWarning {
			t.Errorf("Warning event for a deleted object: %+v", e)
		}
	}
	if v := counter(t, "kopgo_reconcile_errors_total", name); v != 0 {
		t.Errorf("kopgo_reconcile_errors_total = %v for an object deleted under its reconcile, want 0", v)
	}
	if v := counter(t, "controller_runtime_reconcile_errors_total", name); v != 0 {
		t.Errorf("controller_runtime_reconcile_errors_total = %v, want 0", v)
	}
}

// counter sums a counter family's series for one controller from
// controller-runtime's registry (where kopgo's metrics live too).
func counter(t *testing.T, metric, controller string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

// Events from a Reconciler name the field owner as their reporting
// controller: the name under which the controller writes everywhere.
func TestEventsReportTheFieldOwner(t *testing.T) {
	ns := cluster.Namespace(t)
	r := reconciler.Func[*widget.Widget](func(_ context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
		env.Recorder.Normal(w, nil, "Checked", "Reconcile", "looked at "+w.Name)
		return reconciler.Done(), nil
	})
	run(t, kopcontroller.New[*widget.Widget]("outcome-events", r).FieldOwner("example.com/widget-operator").
		Config(cluster.Config).Scheme(scheme).LabelSelector("loop="+ns))
	createWidget(t, ns, "w", ns)
	eventually(t, 20*time.Second, "the event", func() error {
		var list eventsv1.EventList
		if err := cluster.Client().List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == "Checked" {
				if e.ReportingController != "example.com/widget-operator" {
					t.Errorf("reportingController %q, want the field owner", e.ReportingController)
				}
				return nil
			}
		}
		return errors.New("no event yet")
	})
}

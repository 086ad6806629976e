package loop_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/loop"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, widget.TestkitOptions(), func(c *testkit.Cluster) { cluster = c })
}

// harness runs an Adapter against one Widget with fresh metrics and a fake
// recorder.
type harness struct {
	t       *testing.T
	w       *widget.Widget
	adapter *loop.Loop[*widget.Widget]
	limiter workqueue.TypedRateLimiter[reconcile.Request]
	reg     *prometheus.Registry
	events  *observability.FakeRecorder
}

func newHarness(t *testing.T, r reconciler.Reconciler[*widget.Widget], opts ...func(*loop.Options)) *harness {
	t.Helper()
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace(t), Name: "w"}, Spec: widget.WidgetSpec{Size: 1}}
	if err := cluster.Client().Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	events := &observability.FakeRecorder{}
	env := &reconciler.Env{Client: client.WithFieldOwner(cluster.Client(), "test-controller"), Reader: cluster.Client(), Recorder: events, Scheme: cluster.Scheme()}
	o := loop.Options{Metrics: m}
	for _, opt := range opts {
		opt(&o)
	}
	l, err := loop.New[*widget.Widget]("widgets", env, r, o)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, w: w, adapter: l, limiter: l.ControllerOptions(crcontroller.Options{}).RateLimiter, reg: reg, events: events}
}

// reconcile is a wake-up of the object with something to look at (news,
// as a related object's event brings): the reconciler runs.
func (h *harness) reconcile() (reconcile.Result, error) {
	h.t.Helper()
	h.adapter.MarkNews(h.req())
	return h.adapter.Reconcile(h.t.Context(), h.req())
}

// wake is a wake-up of the object with nothing new (the echo of a write):
// what the loop makes of it depends on the object's state alone.
func (h *harness) wake() (reconcile.Result, error) {
	h.t.Helper()
	return h.adapter.Reconcile(h.t.Context(), h.req())
}

func (h *harness) req() reconcile.Request {
	return reconcile.Request{NamespacedName: client.ObjectKeyFromObject(h.w)}
}

func (h *harness) get() *widget.Widget {
	h.t.Helper()
	var got widget.Widget
	if err := cluster.Client().Get(h.t.Context(), client.ObjectKeyFromObject(h.w), &got); err != nil {
		h.t.Fatal(err)
	}
	return &got
}

func (h *harness) count(result string) float64 {
	return testutil.ToFloat64(mustCounter(h.reg, "kopgo_reconcile_total", "result", result))
}

func (h *harness) errorsOfKind(kind string) float64 {
	return testutil.ToFloat64(mustCounter(h.reg, "kopgo_reconcile_errors_total", "error_kind", kind))
}

func mustCounter(reg *prometheus.Registry, name, label, value string) prometheus.Collector {
	return counterValue{reg: reg, name: name, label: label, value: value}
}

func condition(w *widget.Widget, t string) string {
	c := status.Get(w, t)
	if c == nil {
		return "-"
	}
	return string(c.Status) + "/" + c.Reason
}

func TestSuccessMarksReadyAndObservedGeneration(t *testing.T) {
	var calls atomic.Int32
	h := newHarness(t, reconciler.Func[*widget.Widget](func(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
		calls.Add(1)
		return reconciler.Done(), nil
	}))
	res, err := h.reconcile()
	if err != nil || res != (reconcile.Result{}) {
		t.Fatalf("Reconcile = %+v, %v", res, err)
	}
	got := h.get()
	if !status.IsTrue(got, status.Ready) || got.Status.ObservedGeneration != got.Generation {
		t.Errorf("status %+v, want Ready and observedGeneration %d", got.Status, got.Generation)
	}
	rv := got.ResourceVersion
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := h.get(); got.ResourceVersion != rv {
		t.Error("a second identical reconcile wrote status again")
	}
	if calls.Load() != 2 || h.count("success") != 2 {
		t.Errorf("calls %d, success metric %v", calls.Load(), h.count("success"))
	}
}

// A wake-up with nothing new since the last reconcile (the echo of its
// status write, as the harness's direct call stands for) runs nothing: no
// call, no write, counted as skipped; a change of the spec runs it.
func TestWakeUpWithNothingNewRunsNothing(t *testing.T) {
	var calls atomic.Int32
	h := newHarness(t, reconciler.Func[*widget.Widget](func(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
		calls.Add(1)
		return reconciler.Done(), nil
	}))
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	rv := h.get().ResourceVersion
	for range 3 {
		if res, err := h.wake(); err != nil || res != (reconcile.Result{}) {
			t.Fatalf("wake-up with nothing new = %+v, %v", res, err)
		}
	}
	skipped := testutil.ToFloat64(mustCounter(h.reg, "kopgo_reconcile_skipped_total", "reason", "nothing_new"))
	if calls.Load() != 1 || h.get().ResourceVersion != rv || skipped != 3 {
		t.Errorf("after 3 wake-ups with nothing new: %d calls, resourceVersion %s (was %s), %v skipped; want 1, unchanged, 3",
			calls.Load(), h.get().ResourceVersion, rv, skipped)
	}
	cur := h.get()
	cur.Spec.Size = 5
	if err := cluster.Client().Update(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	if _, err := h.wake(); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 2 || h.get().Status.ObservedGeneration != cur.Generation {
		t.Errorf("after a spec change: %d calls, observedGeneration %d; want 2, %d", calls.Load(), h.get().Status.ObservedGeneration, cur.Generation)
	}
}

func TestGoneObjectIsSkipped(t *testing.T) {
	var calls atomic.Int32
	h := newHarness(t, reconciler.Func[*widget.Widget](func(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
		calls.Add(1)
		return reconciler.Done(), nil
	}))
	res, err := h.adapter.Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: h.w.Namespace, Name: "missing"}})
	if err != nil || res != (reconcile.Result{}) || calls.Load() != 0 {
		t.Errorf("Reconcile of a missing object = %+v, %v, %d calls", res, err, calls.Load())
	}
}

func TestErrorsAndMarkers(t *testing.T) {
	// crErr is what controller-runtime sees: "" (nil), "error" or
	// "terminal". after is the delay: RequeueAfter without an error, or
	// the rate limiter's next delay with one (-1: its own backoff).
	fieldCause := field.ErrorList{field.Invalid(field.NewPath("data", "x"), "y", "not allowed")}
	tests := []struct {
		name       string
		action     reconciler.Action
		err        error
		wantResult string
		crErr      string
		after      time.Duration
		ready      string
		stalled    string
		errorKind  string
	}{
		{"retryable", reconciler.Done(), koperrors.Errorf(koperrors.Unavailable, "backend down"), "error", "error", -1, "False/Unavailable", "-", "unavailable"},
		{"terminal", reconciler.Done(), koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "spec.size: must be positive")), "terminal", "terminal", 0, "False/Invalid", "True/Invalid", "invalid"},
		{"422 naming a field", reconciler.Done(), apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "c", fieldCause), "terminal", "terminal", 0, "False/Invalid", "True/Invalid", "invalid"},
		{"422 naming no field is retried", reconciler.Done(), apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "c", nil), "error", "error", -1, "False/Invalid", "-", "invalid"},
		{"bad request from the API server", reconciler.Done(), apierrors.NewBadRequest("yaml: control characters are not allowed"), "terminal", "terminal", 0, "False/Invalid", "True/Invalid", "invalid"},
		{"requeue only changes no condition", reconciler.RequeueAfter(30 * time.Second), nil, "requeue", "", 30 * time.Second, "True/Succeeded", "-", ""},
		{"error with requeue", reconciler.RequeueAfter(time.Minute), errors.New("later"), "error", "error", time.Minute, "False/Internal", "-", "internal"},
		{"already exists", reconciler.Done(), apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, "c"), "error", "error", -1, "False/AlreadyExists", "-", "already_exists"},
		{"conflict", reconciler.Done(), apierrors.NewConflict(schema.GroupResource{Resource: "widgets"}, "w", errors.New("modified")), "conflict", "", 0, "-", "-", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, reconciler.Func[*widget.Widget](func(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
				return tt.action, tt.err
			}))
			res, err := h.reconcile()
			crErr := ""
			switch {
			case errors.Is(err, reconcile.TerminalError(nil)):
				crErr = "terminal"
			case err != nil:
				crErr = "error"
			}
			if crErr != tt.crErr {
				t.Errorf("controller-runtime sees %q (%v), want %q", crErr, err, tt.crErr)
			}
			switch {
			case tt.crErr == "" && res.RequeueAfter != tt.after:
				t.Errorf("Reconcile = %+v, want RequeueAfter %s", res, tt.after)
			case tt.crErr == "error" && tt.after > 0:
				if d := h.limiter.When(h.req()); d != tt.after {
					t.Errorf("next attempt after %s, want %s", d, tt.after)
				}
			}
			got := h.get()
			if condition(got, status.Ready) != tt.ready || condition(got, status.Stalled) != tt.stalled {
				t.Errorf("Ready %s Stalled %s, want %s and %s", condition(got, status.Ready), condition(got, status.Stalled), tt.ready, tt.stalled)
			}
			if h.count(tt.wantResult) != 1 {
				t.Errorf("kopgo_reconcile_total{result=%q} = %v, want 1", tt.wantResult, h.count(tt.wantResult))
			}
			if tt.errorKind != "" && h.errorsOfKind(tt.errorKind) != 1 {
				t.Errorf("kopgo_reconcile_errors_total{error_kind=%q} = %v, want 1", tt.errorKind, h.errorsOfKind(tt.errorKind))
			}
			if tt.wantResult == "conflict" && (h.errorsOfKind("conflict") != 0 || len(h.events.Events()) != 0) {
				t.Error("a conflict was counted as an error or reported as an event")
			}
		})
	}
}

func TestPanicIsRecovered(t *testing.T) {
	// Without a timeout the call runs on the caller's goroutine; with one,
	// on a worker, which must survive the panic for the next call.
	for name, timeout := range map[string]time.Duration{"inline": 0, "on a worker": time.Minute} {
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int32
			h := newHarness(t, reconciler.Func[*widget.Widget](func(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
				if calls.Add(1) == 1 {
					panic(fmt.Sprintf("bug handling %s", w.Name))
				}
				return reconciler.Done(), nil
			}), func(o *loop.Options) { o.Timeout = timeout })
			_, err := h.reconcile()
			if err == nil || !strings.Contains(err.Error(), "panicked") {
				t.Fatalf("Reconcile = %v, want the panic as an error", err)
			}
			if c := status.Get(h.get(), status.Ready); c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "panicked") {
				t.Errorf("Ready = %+v", c)
			}
			if h.count("panic") != 1 || h.errorsOfKind("internal") != 1 {
				t.Errorf("panic metrics: result %v, errors %v", h.count("panic"), h.errorsOfKind("internal"))
			}
			// The next call runs (on the same worker, under a timeout).
			if _, err := h.reconcile(); err != nil {
				t.Fatalf("the call after the panic: %v", err)
			}
			if c := status.Get(h.get(), status.Ready); c == nil || c.Status != metav1.ConditionTrue {
				t.Errorf("after the next call, Ready = %+v, want True", c)
			}
		})
	}
}

// A reconcile that runs past its deadline is cut, counted as a timeout
// error, and Ready=False says so, written in the window after the deadline.
func TestTimeoutIsReportedInStatus(t *testing.T) {
	h := newHarness(t, reconciler.Func[*widget.Widget](func(ctx context.Context, _ *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
		<-ctx.Done()
		return reconciler.Done(), ctx.Err()
	}), func(o *loop.Options) { o.Timeout = 200 * time.Millisecond })
	_, err := h.reconcile()
	if koperrors.KindOf(err) != koperrors.Timeout {
		t.Fatalf("Reconcile = %v, want a Timeout error", err)
	}
	c := status.Get(h.get(), status.Ready)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "Timeout" || !strings.Contains(c.Message, "did not finish within 200ms") {
		t.Errorf("Ready = %+v", c)
	}
	if h.count("timeout") != 1 || h.count("success") != 0 || h.errorsOfKind("timeout") != 1 {
		t.Error("a timeout was not counted as a timeout error")
	}
}

// cleaner implements the Finalizer hook.
type cleaner struct {
	reconciles, cleanups atomic.Int32
	failCleanup          atomic.Bool
}

func (c *cleaner) Reconcile(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
	c.reconciles.Add(1)
	return reconciler.Done(), nil
}

func (c *cleaner) Cleanup(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
	c.cleanups.Add(1)
	if c.failCleanup.Load() {
		return reconciler.Done(), koperrors.Errorf(koperrors.Unavailable, "external system down")
	}
	return reconciler.Done(), nil
}

func TestFinalizerProtocol(t *testing.T) {
	r := &cleaner{}
	h := newHarness(t, r)
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	got := h.get()
	if len(got.Finalizers) != 1 || got.Finalizers[0] != "kopgo.dev/widgets" {
		t.Fatalf("finalizers %v, want ours added by the first reconcile", got.Finalizers)
	}
	// Another controller's finalizer must survive our cleanup.
	got.Finalizers = append(got.Finalizers, "other.io/keep")
	if err := cluster.Client().Update(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client().Delete(t.Context(), got); err != nil {
		t.Fatal(err)
	}

	r.failCleanup.Store(true)
	if _, err := h.reconcile(); err == nil {
		t.Fatal("a failing cleanup returned no error")
	}
	if c := status.Get(h.get(), status.Ready); c == nil || c.Reason != "Unavailable" {
		t.Errorf("failing cleanup not reported in status: %+v", c)
	}

	r.failCleanup.Store(false)
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	got = h.get()
	if len(got.Finalizers) != 1 || got.Finalizers[0] != "other.io/keep" {
		t.Errorf("finalizers after cleanup %v, want only other.io/keep", got.Finalizers)
	}
	if r.cleanups.Load() != 2 || r.reconciles.Load() != 1 {
		t.Errorf("cleanups %d reconciles %d, want 2 and 1", r.cleanups.Load(), r.reconciles.Load())
	}
	got.Finalizers = nil
	if err := cluster.Client().Update(t.Context(), got); err != nil {
		t.Fatal(err)
	}
}

// fixed has a fixed-delay error policy.
type fixed struct{}

func (fixed) RetryAfter(*widget.Widget, error, int) time.Duration { return 30 * time.Second }

func (fixed) Reconcile(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
	return reconciler.Done(), errors.New("always failing")
}

func TestErrorPolicy(t *testing.T) {
	h := newHarness(t, fixed{})
	_, err := h.reconcile()
	if err == nil {
		t.Error("a failure handled by the policy reached controller-runtime as a success")
	}
	if d := h.limiter.When(h.req()); d != 30*time.Second {
		t.Errorf("next attempt after %s, want the policy's 30s", d)
	}
	if h.count("error") != 1 {
		t.Error("a policy-handled failure is still an error in metrics")
	}
}

func TestNewRejectsMistakes(t *testing.T) {
	env := &reconciler.Env{Client: cluster.Client(), Scheme: cluster.Scheme()}
	if _, err := loop.New[*widget.Widget]("x", env, nil, loop.Options{}); koperrors.KindOf(err) != koperrors.Config {
		t.Errorf("nil reconciler: %v", err)
	}
	if _, err := loop.New[*widget.Widget]("x", nil, reconciler.Func[*widget.Widget](nil), loop.Options{}); koperrors.KindOf(err) != koperrors.Config {
		t.Errorf("nil env: %v", err)
	}
	empty := &reconciler.Env{Client: cluster.Client(), Scheme: runtime.NewScheme()}
	if _, err := loop.New[*widget.Widget]("x", empty, reconciler.Func[*widget.Widget](nil), loop.Options{}); koperrors.KindOf(err) != koperrors.Config {
		t.Errorf("kind not in scheme: %v", err)
	}
}

// An object on its way out, for a reconciler without a Cleanup hook, gets
// no status write: nothing of ours to do, and nothing true to say. A
// finalizer of someone else's keeps it around while it is reconciled.
func TestDeletingObjectWithoutCleanupGetsNoStatusWrite(t *testing.T) {
	var calls atomic.Int32
	h := newHarness(t, reconciler.Func[*widget.Widget](func(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
		calls.Add(1)
		return reconciler.Done(), nil
	}))
	w := h.get()
	w.Finalizers = []string{"example.com/someone-else"}
	if err := cluster.Client().Update(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client().Delete(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	before := h.get().ResourceVersion
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	got := h.get()
	if got.ResourceVersion != before || len(got.Status.Conditions) != 0 || calls.Load() != 0 {
		t.Errorf("a deleting object was written (resourceVersion %s -> %s, conditions %v) or reconciled (%d calls)",
			before, got.ResourceVersion, got.Status.Conditions, calls.Load())
	}
	got.Finalizers = nil
	if err := cluster.Client().Update(t.Context(), got); err != nil {
		t.Fatal(err)
	}
}

// deletingCleaner deletes its object during its first Reconcile (another
// controller's finalizer holds it) and fails its first Cleanup.
type deletingCleaner struct {
	cleanups atomic.Int32
}

func (d *deletingCleaner) Reconcile(ctx context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	return reconciler.Done(), cluster.Client().Delete(ctx, w.DeepCopyObject().(*widget.Widget))
}

func (d *deletingCleaner) Cleanup(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
	if d.cleanups.Add(1) == 1 {
		return reconciler.Done(), koperrors.Errorf(koperrors.Unavailable, "external system down")
	}
	return reconciler.Done(), nil
}

// An object deleted while its first Reconcile ran already carries the
// loop's finalizer (added before Reconcile was called): its cleanup runs
// on the next reconcile, is retried when it fails, and runs no more once
// it finished; another controller's finalizer stays.
func TestCleanupOfAnObjectDeletedDuringItsFirstReconcileIsRetried(t *testing.T) {
	d := &deletingCleaner{}
	h := newHarness(t, d)
	w := h.get()
	w.Finalizers = []string{"other.io/hold"}
	if err := cluster.Client().Update(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile(); err != nil {
		t.Fatalf("first reconcile: %v", err)
	}
	if got := h.get(); !slices.Contains(got.Finalizers, "kopgo.dev/widgets") || got.DeletionTimestamp == nil {
		t.Fatalf("after the first reconcile: finalizers %v, deletionTimestamp %v; want the loop's finalizer holding a deleted object", got.Finalizers, got.DeletionTimestamp)
	}
	if _, err := h.reconcile(); err == nil {
		t.Fatal("the failing cleanup returned no error")
	}
	if _, err := h.reconcile(); err != nil {
		t.Fatalf("third reconcile: %v", err)
	}
	if n := d.cleanups.Load(); n != 2 {
		t.Errorf("cleanups %d, want 2 (one failed, one retried)", n)
	}
	if _, err := h.reconcile(); err != nil || d.cleanups.Load() != 2 {
		t.Errorf("a fourth reconcile: %v, cleanups %d; want nothing more", err, d.cleanups.Load())
	}
	got := h.get()
	if !slices.Equal(got.Finalizers, []string{"other.io/hold"}) {
		t.Errorf("finalizers %v, want only the other controller's", got.Finalizers)
	}
	got.Finalizers = nil
	if err := cluster.Client().Update(t.Context(), got); err != nil {
		t.Fatal(err)
	}
}

// markingCleaner reports its own Ready and has a Cleanup hook.
type markingCleaner struct{}

func (markingCleaner) Reconcile(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	status.MarkReady(w, "Mine", "set by the reconciler")
	return reconciler.Done(), nil
}

func (markingCleaner) Cleanup(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
	return reconciler.Done(), nil
}

// The finalizer, added before the first Reconcile, does not cost the
// status that Reconcile set: the first status write carries it.
func TestFinalizerAddKeepsTheReconcilersStatus(t *testing.T) {
	h := newHarness(t, markingCleaner{})
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	got := h.get()
	if len(got.Finalizers) != 1 {
		t.Fatalf("finalizers %v", got.Finalizers)
	}
	if c := condition(got, status.Ready); c != "True/Mine" {
		t.Errorf("Ready after the first reconcile = %s, want the reconciler's True/Mine", c)
	}
}

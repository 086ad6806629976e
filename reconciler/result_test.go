package reconciler_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

func TestResult(t *testing.T) {
	terminal := koperrors.Terminal(errors.New("spec.x: bad"))
	plain := errors.New("backend down")
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "cm", field.ErrorList{field.Invalid(field.NewPath("data").Key("a b"), "a b", "a valid config key must consist of alphanumeric characters")})
	invalidNoField := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "cm", nil)
	// A provider's answers through koperrors.FromHTTP.
	limited := koperrors.FromHTTP(&http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"30"}}})
	unauthorized := koperrors.FromHTTP(&http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{"Retry-After": {"30"}}})
	for _, tc := range []struct {
		name    string
		action  reconciler.Action
		err     error
		want    reconcile.Result
		wantErr error
	}{
		{"done", reconciler.Done(), nil, reconcile.Result{}, nil},
		{"requeue after", reconciler.RequeueAfter(time.Minute), nil, reconcile.Result{RequeueAfter: time.Minute}, nil},
		{"requeue now", reconciler.Requeue(), nil, reconcile.Result{Requeue: true}, nil},             //nolint:staticcheck // what controller-runtime reads
		{"zero delay is now", reconciler.RequeueAfter(0), nil, reconcile.Result{Requeue: true}, nil}, //nolint:staticcheck // as above
		{"failure", reconciler.Done(), plain, reconcile.Result{}, plain},
		{"failure with a delay: an error to controller-runtime", reconciler.RequeueAfter(time.Minute), plain, reconcile.Result{}, plain},
		{"terminal", reconciler.Done(), terminal, reconcile.Result{}, terminal},
		{"terminal with a schedule keeps the schedule", reconciler.RequeueAfter(time.Hour), terminal, reconcile.Result{RequeueAfter: time.Hour}, nil},
		{"terminal with requeue now: no retry at once", reconciler.Requeue(), terminal, reconcile.Result{}, terminal},
		{"422 naming a field", reconciler.Done(), invalid, reconcile.Result{}, invalid},
		{"422 naming a field with a schedule", reconciler.RequeueAfter(time.Hour), invalid, reconcile.Result{RequeueAfter: time.Hour}, nil},
		{"422 without a field is not terminal", reconciler.Done(), invalidNoField, reconcile.Result{}, invalidNoField},
		{"failure with Retry-After: requeue after it", reconciler.Done(), limited, reconcile.Result{RequeueAfter: 30 * time.Second}, nil},
		{"failure with Retry-After, requeue now: after it", reconciler.Requeue(), limited, reconcile.Result{RequeueAfter: 30 * time.Second}, nil},
		{"failure with Retry-After and a delay: the delay", reconciler.RequeueAfter(time.Minute), limited, reconcile.Result{RequeueAfter: time.Minute}, nil},
		{"failure with Retry-After, wrapped and marked", reconciler.Done(), koperrors.WithReason(fmt.Errorf("create: %w", limited), "RateLimited"), reconcile.Result{RequeueAfter: 30 * time.Second}, nil},
		{"terminal with Retry-After: terminal", reconciler.Done(), unauthorized, reconcile.Result{}, unauthorized},
		{"terminal with Retry-After and a schedule: the schedule", reconciler.RequeueAfter(time.Hour), unauthorized, reconcile.Result{RequeueAfter: time.Hour}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := reconciler.Result(tc.action, tc.err)
			if diff := cmp.Diff(tc.want, got); diff != "" || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("Result(%s, %v) = %+v, %v; want %+v, %v (-want +got:\n%s)", tc.action, tc.err, got, err, tc.want, tc.wantErr, diff)
			}
			// controller-runtime's own test: a terminal error is not
			// retried; any other error is.
			wantTerminal := err != nil && koperrors.IsTerminal(tc.err)
			if gotTerminal := errors.Is(err, reconcile.TerminalError(nil)); gotTerminal != wantTerminal {
				t.Errorf("Result(%s, %v) returned %v, which controller-runtime reads as terminal: %t, want %t", tc.action, tc.err, err, gotTerminal, wantTerminal)
			}
		})
	}
}

// A plain controller-runtime reconciler (kubebuilder's shape) that uses
// kopgo's helpers and asks for a requeue through reconciler.Result waits
// the delay it asked for, and controller-runtime counts no error.
func TestResultInAPlainControllerWaitsTheDelay(t *testing.T) {
	ns := cluster.Namespace(t)
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cron"}, Spec: widget.WidgetSpec{Size: 1}}
	if err := cluster.Client().Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	mgr, err := manager.New(cluster.Config, manager.Options{
		Scheme:  cluster.Scheme(),
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	const name = "plain-requeue"
	const every = 700 * time.Millisecond
	var mu sync.Mutex
	var calls []time.Time
	c := mgr.GetClient()
	r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		mu.Lock()
		calls = append(calls, time.Now())
		mu.Unlock()
		var got widget.Widget
		if err := c.Get(ctx, req.NamespacedName, &got); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		p := status.NewPatcher(&got)
		status.SetError(&got, nil)
		if _, err := p.Patch(ctx, c, &got, client.FieldOwner(name)); err != nil {
			return reconcile.Result{}, err
		}
		return reconciler.Result(reconciler.RequeueAfter(every), nil)
	})
	err = ctrl.NewControllerManagedBy(mgr).Named(name).For(&widget.Widget{}).
		WithOptions(controller.Options{SkipNameValidation: new(true)}).Complete(r)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	time.Sleep(4 * every)
	cancel()
	<-done

	mu.Lock()
	defer mu.Unlock()
	if len(calls) < 3 {
		t.Fatalf("%d reconciles in %s, want at least 3", len(calls), 4*every)
	}
	// The status write comes back as an update event at once; the requeues
	// after it are paced by the delay. Count the gaps that are requeues.
	paced := 0
	for i := 1; i < len(calls); i++ {
		gap := calls[i].Sub(calls[i-1])
		if gap >= every-50*time.Millisecond {
			paced++
		}
		if gap < every/2 && i > 2 {
			t.Errorf("reconcile %d came %s after the one before, want the requested %s", i, gap, every)
		}
	}
	if paced < 2 {
		t.Errorf("gaps %v: want at least 2 paced by %s", gaps(calls), every)
	}
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_errors_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == name && m.GetCounter().GetValue() != 0 {
					t.Errorf("controller-runtime counted %v errors for requeues", m.GetCounter().GetValue())
				}
			}
		}
	}
}

func gaps(calls []time.Time) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(calls); i++ {
		out = append(out, calls[i].Sub(calls[i-1]).Round(time.Millisecond))
	}
	return out
}

// A plain controller-runtime reconciler that applies a child and returns
// reconciler.Result for a terminal failure is not retried: within the
// window it sends the one apply of its one reconcile, shows Stalled naming
// the cause, and controller-runtime counts one terminal error. The same
// for the API server's 422 naming a field and for the Applier's refusal
// to take over a name another controller holds: one verdict.
//
// The window is 3s: a failure retried with controller-runtime's default
// backoff (5ms doubling) is retried about nine times in it, so one apply
// against about ten tells the two apart without a long test. The watch
// filters status-only updates (GenerationChangedPredicate, as kubebuilder
// projects commonly do), so that the reconcile the status write would
// trigger is not mistaken for a retry.
func TestResultTerminalInAPlainControllerIsNotRetried(t *testing.T) {
	const window = 3 * time.Second
	for _, tc := range []struct {
		name    string
		data    map[string]string
		holder  bool // the child's name is held by another Widget
		message []string
	}{
		{"422 naming a field", map[string]string{"not a key!": "v"}, false, []string{`data[not a key!]`, "Invalid value"}},
		{"name held by another controller", map[string]string{"k": "v"}, true, []string{"controlled by ConfigMap holder (uid "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			name := "plain-terminal-" + strings.ReplaceAll(ns, "testresultterminalinaplaincontrollerisnotretried", "")
			if tc.holder {
				// Another controller's object (not a Widget: this
				// controller would reconcile it).
				holder := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "holder"}}
				if err := cluster.Client().Create(t.Context(), holder); err != nil {
					t.Fatal(err)
				}
				held := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "child"}}
				if err := controllerutil.SetControllerReference(holder, held, cluster.Scheme()); err != nil {
					t.Fatal(err)
				}
				if err := cluster.Client().Create(t.Context(), held); err != nil {
					t.Fatal(err)
				}
			}
			w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cron"}}
			if err := cluster.Client().Create(t.Context(), w); err != nil {
				t.Fatal(err)
			}

			// Count every request the manager (and so the Applier on
			// it) sends for the child by name; the cache's list and
			// watch of ConfigMaps do not name it.
			var applies, childRequests atomic.Int32
			cfg := rest.CopyConfig(cluster.Config)
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
				return roundTripFunc(func(req *http.Request) (*http.Response, error) {
					if strings.HasSuffix(req.URL.Path, "/configmaps/child") {
						childRequests.Add(1)
						if req.Method == http.MethodPatch {
							applies.Add(1)
						}
					}
					return rt.RoundTrip(req)
				})
			})
			mgr, err := manager.New(cfg, manager.Options{
				Scheme:  cluster.Scheme(),
				Metrics: metricsserver.Options{BindAddress: "0"},
				Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			a, err := apply.New(mgr.GetConfig(), name, apply.WithCluster(mgr))
			if err != nil {
				t.Fatal(err)
			}
			var reconciles atomic.Int32
			c := mgr.GetClient()
			r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				reconciles.Add(1)
				var got widget.Widget
				if err := c.Get(ctx, req.NamespacedName, &got); err != nil {
					return reconcile.Result{}, client.IgnoreNotFound(err)
				}
				p := status.NewPatcher(&got)
				child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: got.Namespace, Name: "child"}, Data: tc.data}
				if err := controllerutil.SetControllerReference(&got, child, c.Scheme()); err != nil {
					return reconcile.Result{}, err
				}
				_, err := a.Apply(ctx, child)
				status.SetError(&got, err)
				if _, perr := p.Patch(ctx, c, &got, client.FieldOwner(name)); perr != nil {
					return reconcile.Result{}, perr
				}
				return reconciler.Result(reconciler.Done(), err)
			})
			err = ctrl.NewControllerManagedBy(mgr).Named(name).
				For(&widget.Widget{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
				WithOptions(controller.Options{SkipNameValidation: new(true)}).Complete(r)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				if err := mgr.Start(ctx); err != nil {
					t.Errorf("manager: %v", err)
				}
			}()
			time.Sleep(window)
			cancel()
			<-done

			type counts struct{ Reconciles, Requests, Applies, TerminalErrors, Errors float64 }
			got := counts{
				Reconciles: float64(reconciles.Load()), Requests: float64(childRequests.Load()), Applies: float64(applies.Load()),
				TerminalErrors: crCounter(t, "controller_runtime_terminal_reconcile_errors_total", name),
				Errors:         crCounter(t, "controller_runtime_reconcile_errors_total", name),
			}
			if diff := cmp.Diff(counts{Reconciles: 1, Requests: 1, Applies: 1, TerminalErrors: 1, Errors: 1}, got); diff != "" {
				t.Errorf("in %s (-want +got):\n%s", window, diff)
			}
			t.Logf("in %s: %d reconciles, %d applies, %d requests for the child", window, reconciles.Load(), applies.Load(), childRequests.Load())

			var after widget.Widget
			if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(w), &after); err != nil {
				t.Fatal(err)
			}
			stalled := status.Get(&after, status.Stalled)
			if stalled == nil || stalled.Status != metav1.ConditionTrue || stalled.Reason != "Invalid" {
				t.Fatalf("Stalled = %v, want True/Invalid", stalled)
			}
			for _, s := range tc.message {
				if !strings.Contains(stalled.Message, s) {
					t.Errorf("Stalled message %q does not say %q", stalled.Message, s)
				}
			}
		})
	}
}

// crCounter reads one of controller-runtime's counters for a controller.
func crCounter(t *testing.T, family, controllerName string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controllerName {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

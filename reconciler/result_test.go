package reconciler_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

func TestResult(t *testing.T) {
	terminal := koperrors.Terminal(errors.New("spec.x: bad"))
	plain := errors.New("backend down")
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := reconciler.Result(tc.action, tc.err)
			if diff := cmp.Diff(tc.want, got); diff != "" || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("Result(%s, %v) = %+v, %v; want %+v, %v (%s)", tc.action, tc.err, got, err, tc.want, tc.wantErr, diff)
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

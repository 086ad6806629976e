package ops_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	clientmetrics "k8s.io/client-go/tools/metrics"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/ops"
)

// Every alert names only metrics kopgo or controller-runtime serve.
func TestAlertMetricsAreServed(t *testing.T) {
	known := servedMetrics(t)
	for _, a := range ops.Alerts() {
		expr, err := parser.NewParser(parser.Options{}).ParseExpr(a.Expr)
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		for _, name := range metricNames(expr) {
			if !known[name] {
				t.Errorf("%s: metric %s is served by neither kopgo nor controller-runtime", a.Name, name)
			}
		}
	}
}

var (
	servedOnce sync.Once
	served     map[string]bool
)

// servedMetrics returns the names of the series an operator's /metrics
// serves: controller-runtime's registry after a real controller started
// and reconciled, its work queue moved an item, a leader election was won,
// a client request was counted, and kopgo's metrics recorded each kind of
// event. A histogram is served as name_bucket, name_sum and name_count.
func servedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	servedOnce.Do(func() { served = exercise(t) })
	if served == nil {
		t.Fatal("exercising the metrics failed")
	}
	return served
}

func exercise(t *testing.T) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	// kopgo's own series.
	m, err := observability.Default()
	if err != nil {
		t.Error(err)
		return nil
	}
	m.ObserveReconcile(ctx, "web", observability.ResultError, koperrors.Errorf(koperrors.Unavailable, "down"), time.Millisecond)
	m.RecordApply("web", "Created")
	m.RecordDeletions("web", 1)
	m.RecordDeferral("web", true)
	m.RecordExternalCall("web", "observe", nil, time.Millisecond)
	long := metav1.NewTime(time.Now().Add(-time.Hour))
	m.ObserveObject("web", types.NamespacedName{Namespace: "default", Name: "a"}, "uid-a", []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionFalse, LastTransitionTime: long},
		{Type: "Stalled", Status: metav1.ConditionTrue, LastTransitionTime: long},
	})

	// A controller that starts and reconciles one object an event names.
	done := make(chan struct{})
	var once sync.Once
	c, err := controller.NewUnmanaged("names-test", controller.Options{
		Reconciler: reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			once.Do(func() { close(done) })
			return reconcile.Result{}, nil
		}),
	})
	if err != nil {
		t.Error(err)
		return nil
	}
	events := make(chan event.GenericEvent, 1)
	events <- event.GenericEvent{Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}}}
	if err := c.Watch(source.Channel(events, &handler.EnqueueRequestForObject{})); err != nil {
		t.Error(err)
		return nil
	}
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = c.Start(cctx) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Error("the controller did not reconcile")
		return nil
	}
	stop()

	// A work queue of client-go under controller-runtime's metrics provider,
	// as kopgo's loop makes one.
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "names-test-queue"})
	q.AddRateLimited("x")
	item, _ := q.Get()
	q.Done(item)
	q.ShutDown()

	// A leader election won, on a fake clientset's Lease.
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: "default", Name: "names-test-lock"},
		Client:     fake.NewClientset().CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: "replica-a"},
	}
	lctx, lcancel := context.WithCancel(ctx)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, Name: "names-test-lock",
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: time.Second,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { lcancel() },
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		t.Error(err)
		lcancel()
		return nil
	}
	le.Run(lctx)

	// A request of a client.
	clientmetrics.RequestResult.Increment(ctx, "200", "GET", "apiserver")

	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Error(err)
		return nil
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
		if mf.GetType().String() == "HISTOGRAM" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[mf.GetName()+s] = true
			}
		}
	}
	for _, want := range []string{"controller_runtime_reconcile_total", "workqueue_depth", "leader_election_master_status", "rest_client_requests_total", "kopgo_objects"} {
		if !names[want] {
			t.Errorf("exercise: %s not served; the test's exercise misses it", want)
		}
	}
	return names
}

// metricNames returns the metric names expr selects.
func metricNames(expr parser.Expr) []string {
	var names []string
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			name := vs.Name
			for _, m := range vs.LabelMatchers {
				if m.Name == "__name__" {
					name = m.Value
				}
			}
			if name != "" && !strings.HasPrefix(name, "$") {
				names = append(names, name)
			}
		}
		return nil
	})
	return names
}

package observability_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kopgo/kopgo/observability"
)

// In a test, a FakeRecorder stands in for the real one and keeps what the
// reconciler recorded.
func ExampleFakeRecorder() {
	var events observability.FakeRecorder
	app := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	events.Warning(app, nil, "InvalidSpec", "Validate", "spec.port 70000: must be at most 65535")
	for _, e := range events.Events() {
		fmt.Println(e.Type, e.Reason, e.Note)
	}
	// Output: Warning InvalidSpec spec.port 70000: must be at most 65535
}

// With your own manager: a recorder through the manager's client, and
// Shutdown once the manager stopped, so that the counts of events recorded
// while it drained reach the server too. It needs a cluster, so it is
// compiled but not run.
func ExampleNewRecorder() {
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	events, err := observability.NewRecorder(mgr, "webapp")
	if err != nil {
		fmt.Println(err)
		return
	}
	// ... set up reconcilers that call events.Normal and events.Warning ...
	err = mgr.Start(ctrl.SetupSignalHandler())
	events.Shutdown(context.Background())
	if err != nil {
		fmt.Println(err)
	}
}

// Reconcile metrics in a registry of one's own, recorded by a plain
// controller-runtime reconciler. Serve the registry with
// promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), or push it from a
// Job.
func ExampleNewMetrics() {
	reg := prometheus.NewRegistry()
	metrics, err := observability.NewMetrics(reg)
	if err != nil {
		fmt.Println(err)
		return
	}

	// In the reconciler, once per reconcile:
	ctx, start := context.Background(), time.Now()
	reconcileErr := reconcileConfigSet(ctx)
	result := observability.ResultSuccess
	if reconcileErr != nil {
		result = observability.ResultError
	}
	metrics.ObserveReconcile(ctx, "configset", result, reconcileErr, time.Since(start))
	metrics.RecordApply("configset", "Created")

	// What the registry holds.
	families, err := reg.Gather()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if m.GetCounter() == nil {
				continue
			}
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			fmt.Printf("%s{%s} %g\n", f.GetName(), strings.Join(labels, ","), m.GetCounter().GetValue())
		}
	}
	// Output:
	// kopgo_apply_total{controller=configset,outcome=created} 1
	// kopgo_reconcile_total{controller=configset,result=success} 1
}

// reconcileConfigSet stands for a reconciler's work.
func reconcileConfigSet(context.Context) error { return nil }

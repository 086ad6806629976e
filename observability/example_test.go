package observability_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// With your own manager: a recorder through the manager's client,
// reporting as the controller's field owner, and Shutdown once the
// manager stopped, so that the counts of events recorded while it drained
// reach the server too. It needs a cluster, so it is compiled but not
// run.
func ExampleNewRecorder() {
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	events, err := observability.NewRecorder(mgr, "webapp-controller")
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

// A program without a manager, here a backup run by a CronJob, records
// events through a recorder of its own, and shuts it down before it exits
// so that nothing recorded is lost.
func ExampleNewRecorderForConfig() {
	ctx := context.Background()
	cfg := ctrl.GetConfigOrDie() // $KUBECONFIG, or the pod's service account
	events, err := observability.NewRecorderForConfig(cfg, "example.com/backup")
	if err != nil {
		fmt.Println(err)
		return
	}
	backup := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nightly-backup"}}
	events.Normal(backup, nil, "BackupSaved", "Backup", "3 databases saved to s3://backups/nightly")
	events.Shutdown(ctx) // writes what is pending

	// What the cluster now shows about the CronJob.
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	var list eventsv1.EventList
	if err := c.List(ctx, &list, client.InNamespace("default")); err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range list.Items {
		if e.Regarding.Name == backup.Name {
			fmt.Println(e.Type, e.Reason, e.ReportingController+":", e.Note)
		}
	}
	// Output: Normal BackupSaved example.com/backup: 3 databases saved to s3://backups/nightly
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

package controller_test

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/owners"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/widget"
)

// A complete operator main: the reconciler, and the Builder with probes,
// metrics, leader election, graceful shutdown, a timeout, concurrency and
// watches. It runs against the cluster in KUBECONFIG until SIGTERM.
func ExampleBuilder_Run() {
	r := reconciler.Func[*widget.Widget](func(_ context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
		env.Recorder.Normal(w, nil, "Seen", "Reconcile", fmt.Sprintf("size %d", w.Spec.Size))
		return reconciler.Done(), nil
	})
	if _, err := ctrl.GetConfig(); err != nil {
		fmt.Println("no cluster:", err)
		return
	}
	err := kopcontroller.New[*widget.Widget]("widgets", r).
		Scheme(scheme).
		HealthPort(8081).
		MetricsPort(8080).
		LeaderElection("default", "widgets-leader").
		GracefulShutdown(30*time.Second).
		ReconcileTimeout(time.Minute).
		Concurrency(4).
		Owns(&appsv1.Deployment{}).
		Watch(&corev1.Secret{}, owners.LabelMapper("example.com/widget")).
		Run(ctrl.SetupSignalHandler())
	fmt.Println(err)
}

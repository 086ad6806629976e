package controller_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kopgo/kopgo/apply"
	"github.com/kopgo/kopgo/examples/kubebuilder/api/v1alpha1"
	"github.com/kopgo/kopgo/examples/kubebuilder/internal/controller"
	"github.com/kopgo/kopgo/observability"
)

// Wiring the reconciler into a manager, as cmd/main.go does. It needs a
// cluster, so it is compiled but not run.
func ExampleConfigSetReconciler_SetupWithManager() {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{Scheme: scheme})
	if err != nil {
		fmt.Println(err)
		return
	}
	applier, err := apply.New(mgr.GetConfig(), controller.FieldOwner, apply.WithCluster(mgr))
	if err != nil {
		fmt.Println(err)
		return
	}
	recorder, err := observability.NewRecorder(mgr, controller.FieldOwner)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer recorder.Shutdown(context.Background())

	err = (&controller.ConfigSetReconciler{
		Client:   mgr.GetClient(),
		Scheme:   mgr.GetScheme(),
		Applier:  applier,
		Recorder: recorder,
	}).SetupWithManager(mgr)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fmt.Println(err)
	}
}

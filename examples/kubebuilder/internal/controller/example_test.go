package controller_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	kubebuilderv1 "github.com/kopgo/kopgo/examples/kubebuilder/api/v1"
	"github.com/kopgo/kopgo/examples/kubebuilder/internal/controller"
)

// Wiring the reconciler into a manager, as cmd/main.go does: with a
// Client and a Scheme, as kubebuilder scaffolds it; SetupWithManager adds
// kopgo's helpers. It needs a cluster, so it is compiled but not run.
func ExampleConfigSetReconciler_SetupWithManager() {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kubebuilderv1.AddToScheme(scheme))

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{Scheme: scheme})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = (&controller.ConfigSetReconciler{
		Client: mgr.GetClient(),
		Scheme: mgr.GetScheme(),
	}).SetupWithManager(mgr)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fmt.Println(err)
	}
}

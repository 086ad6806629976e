// Command echoserver runs the EchoServer operator, kopgo's declarative
// example (package github.com/kopgo/kopgo/examples/echoserver), against the
// cluster of the current kubeconfig or, in a pod, the in-cluster
// configuration. Install the CRD first:
//
//	kubectl apply -f examples/echoserver/config/crd
//	go run ./examples/echoserver/cmd/echoserver
package main

import (
	"fmt"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/examples/echoserver"
	"github.com/kopgo/kopgo/examples/echoserver/api/v1alpha1"
	"github.com/kopgo/kopgo/reconciler"
)

func main() {
	ctrl.SetLogger(klog.NewKlogr())
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fail(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		fail(err)
	}
	err := kopcontroller.New[*v1alpha1.EchoServer]("echoserver",
		reconciler.Sync(echoserver.ChildKinds(), echoserver.Sync)).
		Scheme(scheme).
		HealthPort(8081).
		MetricsPort(8080).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Run(ctrl.SetupSignalHandler())
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "echoserver:", err)
	os.Exit(1)
}

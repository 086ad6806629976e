package echoserver_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kopgo/kopgo/examples/echoserver"
	"github.com/kopgo/kopgo/examples/echoserver/api/v1alpha1"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
)

// Sync is a plain function: given an EchoServer and the children observed
// so far (none here), it returns the Deployment and the Service, and says in
// status that the Deployment is being created.
func ExampleSync() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	es := &v1alpha1.EchoServer{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "hello"},
		Spec:       v1alpha1.EchoServerSpec{Message: "hello, world", Replicas: new(int32(2)), Port: 8080},
	}
	desired, _, err := echoserver.Sync(context.Background(), es, reconciler.Children{})
	if err != nil {
		panic(err)
	}
	for _, obj := range desired {
		switch o := obj.(type) {
		case *appsv1.Deployment:
			fmt.Println("Deployment", o.Name, *o.Spec.Replicas, o.Spec.Template.Spec.Containers[0].Args)
		case *corev1.Service:
			fmt.Println("Service", o.Name, o.Spec.Ports[0].Port)
		}
	}
	ready := status.Get(es, status.Ready)
	fmt.Println(ready.Status, ready.Reason)
	// Output:
	// Deployment hello 2 [-text=hello, world -listen=:8080]
	// Service hello 8080
	// Unknown Creating
}

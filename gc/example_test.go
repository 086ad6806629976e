package gc_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/gc"
	"github.com/kopgo/kopgo/scope"
)

// Delete the Deployments this operator labelled whose owner is gone.
func ExampleCollect() {
	c, ok := exampleClient()
	if !ok {
		return
	}
	ours := labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": "my-operator"})
	res, err := gc.Collect(context.Background(), c, appsv1.SchemeGroupVersion.WithKind("Deployment"),
		scope.AllNamespaces, ours, gc.OwnerExists(c), gc.OwnedFinalizers{"example.com/cleanup"})
	if err != nil {
		fmt.Println(err)
	}
	for _, ref := range res.Deleted {
		fmt.Println("deleted", ref)
	}
	for _, s := range res.Stuck {
		fmt.Println("waiting on", s.Finalizers, "for", s.ObjectRef)
	}
}

// Delete one object by name, whether or not it still exists.
func ExampleDelete() {
	c, ok := exampleClient()
	if !ok {
		return
	}
	old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "old"}}
	res, err := gc.Delete(context.Background(), c, []client.Object{old},
		client.PropagationPolicy(metav1.DeletePropagationForeground), client.GracePeriodSeconds(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("deleted now:", len(res.Deleted) == 1) // false when it was gone already
}

// exampleClient is a client of the cluster in the kubeconfig, or false
// (said on stdout) when there is none.
func exampleClient() (client.Client, bool) {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Println("no cluster:", err)
		return nil, false
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		fmt.Println(err)
		return nil, false
	}
	return c, true
}

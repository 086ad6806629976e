package resources_test

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/resources"
	"github.com/kopgo/kopgo/scope"
)

// Wait until a Deployment has rolled out.
func ExamplePoll() {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Println("no cluster:", err)
		return
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var web appsv1.Deployment
	if err := resources.Get(ctx, c, scope.Namespaced("shop"), "web", &web); err != nil {
		fmt.Println(err)
		return
	}
	err = resources.Poll(ctx, c, &web, func(obj client.Object) (bool, error) {
		d := obj.(*appsv1.Deployment)
		return d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas == d.Status.Replicas, nil
	})
	fmt.Println(err)
}

package apply_test

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	"github.com/kopgo/kopgo/test/widget"
)

// These Examples run against the package tests' API server: exampleCluster
// stands for ctrl.GetConfig() and a namespace of the program's.

// Apply a custom resource as a typed object without a manager (in a CLI, a
// job or a test): the Applier learns its type from the scheme given.
func ExampleWithScheme() {
	cfg, ns := exampleCluster()
	scheme := runtime.NewScheme()
	if err := widget.AddToScheme(scheme); err != nil { // your API's AddToScheme
		fmt.Println(err)
		return
	}
	a, err := apply.New(cfg, "widget-cli", apply.WithScheme(scheme))
	if err != nil {
		fmt.Println(err)
		return
	}
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gizmo"}, Spec: widget.WidgetSpec{Size: 3}}
	for range 2 {
		res, err := a.Apply(context.Background(), w)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.Outcome, res.Object().GetKind())
	}
	// Output:
	// Created Widget
	// Unchanged Widget
}

// An apply with a controller reference does not take over an object that
// someone else created first: it fails with a TakeoverError, and adopts
// an orphan only when asked to.
func ExampleAdoptOrphans() {
	cfg, ns := exampleCluster()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "parent"}}
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"color": "blue"}}
	for _, obj := range []client.Object{parent, theirs} {
		if err := c.Create(ctx, obj); err != nil {
			fmt.Println(err)
			return
		}
	}

	a, err := apply.New(cfg, "settings-controller")
	if err != nil {
		fmt.Println(err)
		return
	}
	child := corev1ac.ConfigMap("settings", ns).WithData(map[string]string{"color": "blue"}).
		WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("ConfigMap").
			WithName(parent.Name).WithUID(parent.UID).WithController(true))
	_, err = a.Apply(ctx, child)
	if te, ok := errors.AsType[*apply.TakeoverError](err); ok && te.Controller == nil {
		fmt.Println("refused: the object exists and has no controller")
	}
	// Adopt it on purpose: it is now the parent's, and deleted with it.
	res, err := a.Apply(ctx, child, apply.AdoptOrphans(true))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Outcome, metav1.GetControllerOfNoCopy(res.Object()).Name)
	// Output:
	// refused: the object exists and has no controller
	// Updated parent
}

// Read the applied object typed. When the cache proved it unchanged, Into
// copies the cache's typed object, with no conversion to unstructured and
// back.
func ExampleResult_Into() {
	cfg, ns := exampleCluster()
	a, err := apply.New(cfg, "web-controller")
	if err != nil {
		fmt.Println(err)
		return
	}
	labels := map[string]string{"app": "web"}
	res, err := a.Apply(context.Background(), appsv1ac.Deployment("web", ns).WithSpec(appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().
			WithContainers(corev1ac.Container().WithName("web").WithImage("nginx:1.27"))))))
	if err != nil {
		fmt.Println(err)
		return
	}
	var d appsv1.Deployment
	if err := res.Into(&d); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Outcome, d.Name, d.Generation, d.Spec.Template.Spec.Containers[0].Image)
	// Output:
	// Created web 1 nginx:1.27
}

// exampleCluster returns the tests' API server's config and a new
// namespace.
func exampleCluster() (*rest.Config, string) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := cluster.Client().Create(context.Background(), ns); err != nil {
		panic(err)
	}
	return cluster.Config, ns.Name
}

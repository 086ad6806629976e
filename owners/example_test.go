package owners_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kopgo/kopgo/owners"
	"github.com/kopgo/kopgo/scope"
)

func ExampleSetController() {
	web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "42"}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-config"}}
	if err := owners.SetController(web, cm, scheme); err != nil {
		fmt.Println(err)
	}
	ref := metav1.GetControllerOf(cm)
	fmt.Println(ref.APIVersion, ref.Kind, ref.Name, *ref.BlockOwnerDeletion)

	api := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api", UID: "43"}}
	fmt.Println(owners.SetController(api, cm, scheme))

	elsewhere := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "x"}}
	fmt.Println(owners.SetController(web, elsewhere, scheme))
	// Output:
	// apps/v1 Deployment web true
	// set controller ConfigMap shop/web-config: already controlled by Deployment web (uid 42): Deployment api cannot be a second controller
	// set controller ConfigMap other/x: owner Deployment shop/web is in namespace "shop", not "other": owner references do not cross namespaces (the garbage collector would find no owner and delete the object)
}

func ExampleControllerApplyConfiguration() {
	web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "42"}}
	cm := corev1ac.ConfigMap("web-config", "shop").WithData(map[string]string{"mode": "fast"})
	ref, err := owners.ControllerApplyConfiguration(web, cm, scheme)
	if err != nil {
		fmt.Println(err)
		return
	}
	cm.WithOwnerReferences(ref)
	fmt.Println(*cm.OwnerReferences[0].Kind, *cm.OwnerReferences[0].Name, *cm.OwnerReferences[0].Controller)
	// Output: Deployment web true
}

// A Secret made by someone else names its WebApp in a label; a change to
// the Secret reconciles that WebApp.
func ExampleLabelMapper() {
	webapp := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}} // stands in for a WebApp
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "tls"}}
	if err := owners.SetOwnerLabel(secret, "example.com/webapp", webapp); err != nil {
		fmt.Println(err)
	}
	fmt.Println(secret.Labels)

	mapper := owners.LabelMapper("example.com/webapp") // for handler.EnqueueRequestsFromMapFunc
	fmt.Println(mapper(context.Background(), secret))

	// Cluster-scoped owners (a Tenant kind, say): no namespace in the request.
	fmt.Println(owners.LabelMapper("example.com/webapp", owners.OwnerScope(scope.Cluster))(context.Background(), secret))
	// Output:
	// map[example.com/webapp:web]
	// [shop/web]
	// [/web]
}

func ExampleReferenceMapper() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-config", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "example.com/v1", Kind: "WebApp", Name: "web", UID: "42", Controller: new(true)},
		{APIVersion: "example.com/v1", Kind: "WebApp", Name: "shared", UID: "43"},
	}}}
	webapps := schema.GroupKind{Group: "example.com", Kind: "WebApp"}
	fmt.Println(owners.ReferenceMapper(webapps)(context.Background(), cm))
	fmt.Println(owners.ReferenceMapper(webapps, owners.ControllerOnly(true))(context.Background(), cm))
	// Output:
	// [shop/web shop/shared]
	// [shop/web]
}

// A controller reference for a child that is not a typed object: here an
// unstructured one.
func ExampleControllerReference() {
	web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "42"}}
	ref, err := owners.ControllerReference(web, scheme)
	if err != nil {
		fmt.Println(err)
		return
	}
	child := &unstructured.Unstructured{}
	child.SetOwnerReferences([]metav1.OwnerReference{ref})
	fmt.Println(ref.APIVersion, ref.Kind, ref.Name, ref.UID, *ref.Controller, *ref.BlockOwnerDeletion)

	_, err = owners.ControllerReference(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "new"}}, scheme)
	fmt.Println(err)
	// Output:
	// apps/v1 Deployment web 42 true true
	// controller reference: owner Deployment shop/new has no UID: create it (or read it from the API server) before it can own anything
}

package resources_test

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/gc"
	"github.com/kopgo/kopgo/resources"
	"github.com/kopgo/kopgo/scope"
)

// exampleClient is a fake client that knows the scopes of ConfigMaps,
// Secrets and Namespaces, as a real client learns them from discovery.
func exampleClient(objs ...client.Object) client.Client {
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), apimeta.RESTScopeNamespace)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Secret"), apimeta.RESTScopeNamespace)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), apimeta.RESTScopeRoot)
	return fake.NewClientBuilder().WithRESTMapper(mapper).WithObjects(objs...).Build()
}

// A scope that does not fit the kind is refused before any request: a
// ConfigMap lives in a namespace.
func ExampleGet_scopeMistake() {
	c := exampleClient()
	_, err := resources.Get[corev1.ConfigMap](context.Background(), c, scope.Cluster, "settings")
	fmt.Println(koperrors.KindOf(err) == koperrors.Invalid)
	fmt.Println(err)
	// Output:
	// true
	// get ConfigMap settings: scope Cluster given for namespaced kind /v1, Kind=ConfigMap: use scope.Namespaced(ns) or scope.AllNamespaces
}

// Find reports a missing object without an error.
func ExampleFind() {
	c := exampleClient()
	cm, found, err := resources.Find[corev1.ConfigMap](context.Background(), c, scope.Namespaced("shop"), "settings")
	fmt.Println(cm, found, err)
	// Output:
	// nil false <nil>
}

// Label and annotation changes send only the keys that differ, and nothing
// when the object already has them.
func ExampleSetLabels() {
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = "shop", "settings"
	c := exampleClient(cm)
	ctx := context.Background()

	changed, err := resources.SetLabels(ctx, c, cm, map[string]string{"tier": "web"})
	fmt.Println(changed, err, cm.Labels)
	changed, err = resources.SetLabels(ctx, c, cm, map[string]string{"tier": "web"})
	fmt.Println(changed, err)
	changed, err = resources.RemoveLabels(ctx, c, cm, "tier")
	fmt.Println(changed, err, cm.Labels)
	// Output:
	// true <nil> map[tier:web]
	// false <nil>
	// true <nil> map[]
}

// Keys asks the server for metadata only.
func ExampleKeys() {
	a, b := &corev1.Secret{}, &corev1.Secret{}
	a.Namespace, a.Name = "shop", "b-token"
	b.Namespace, b.Name = "shop", "a-tls"
	c := exampleClient(a, b)
	keys, err := resources.Keys(context.Background(), c, scope.Namespaced("shop"), schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
	fmt.Println(keys, err)
	// Output:
	// [shop/a-tls shop/b-token] <nil>
}

// Wait, within a deadline, until a Deployment has rolled out. (It needs a
// cluster, so it has no Output and is only compiled.)
func ExamplePoll() {
	var c client.Client // from the manager, or client.New
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	web, err := resources.Poll(ctx, c, scope.Namespaced("shop"), "web", func(d *appsv1.Deployment) (bool, error) {
		return d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas == d.Status.Replicas, nil
	}, resources.Interval(time.Second))
	if koperrors.KindOf(err) == koperrors.Timeout {
		fmt.Println(err) // poll Deployment shop/web: context deadline exceeded; last seen resourceVersion ...
		return
	}
	fmt.Println(web.Status.ReadyReplicas, err)
}

// Wait, within a deadline, until any Pod labelled app=web is Ready. (It
// needs a cluster, so it has no Output and is only compiled.)
func ExamplePollAny() {
	var c client.Client
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pod, err := resources.PollAny(ctx, c, scope.Namespaced("shop"), func(p *corev1.Pod) (bool, error) {
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady {
				return cond.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	}, client.MatchingLabels{"app": "web"}, resources.Interval(time.Second))
	if err != nil {
		fmt.Println(err) // poll any Pod shop/: context deadline exceeded; last seen 2 objects, none matching
		return
	}
	fmt.Println(pod.Name, "is ready")
}

// Wait until an object's finalizers are done after deleting it.
func ExamplePollUntilGone() {
	var c client.Client
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	old, err := resources.Get[corev1.ConfigMap](ctx, c, scope.Namespaced("shop"), "old")
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := gc.Delete(ctx, c, []client.Object{old}); err != nil {
		fmt.Println(err)
		return
	}
	_, err = resources.PollUntilGone[corev1.ConfigMap](ctx, c, scope.Namespaced("shop"), "old", resources.ForUID(old.UID))
	fmt.Println(err)
}

// Create a namespace unless it exists.
func ExampleEnsureNamespace() {
	c := exampleClient()
	for range 2 {
		created, err := resources.EnsureNamespace(context.Background(), c, "shop", map[string]string{"team": "a"})
		fmt.Println(created, err)
	}
	// Output:
	// true <nil>
	// false <nil>
}

package errors_test

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	koperrors "github.com/kopgo/kopgo/errors"
)

func ExampleWrap() {
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	cause := apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", fmt.Errorf("the object has been modified"))

	err := koperrors.Wrap(cause, "apply", koperrors.ObjectOf(deploy))
	fmt.Println(err)
	fmt.Println(koperrors.KindOf(err), koperrors.IsConflict(err), koperrors.Is(err, cause))
	// Output:
	// apply Deployment default/web: Operation cannot be fulfilled on deployments.apps "web": the object has been modified
	// Conflict true true
}

func ExampleKindOf() {
	for _, err := range []error{
		apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "settings"),
		fmt.Errorf("reading spec: %w", apierrors.NewServiceUnavailable("etcd is down")),
		fmt.Errorf("plain"),
	} {
		fmt.Println(koperrors.KindOf(err))
	}
	// Output:
	// NotFound
	// Unavailable
	// Internal
}

func ExampleTerminal() {
	err := koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "spec.port %d: must be at most 65535", 70000))
	fmt.Println(err)
	fmt.Println(koperrors.IsTerminal(err), koperrors.KindOf(err))
	// Output:
	// spec.port 70000: must be at most 65535
	// true Invalid
}

func ExampleRequeueAfter() {
	later := koperrors.RequeueAfter(nil, 30*time.Second)
	d, ok := koperrors.RequeueAfterOf(later)
	fmt.Println(later, d, ok, koperrors.IsRequeueOnly(later))

	failed := koperrors.RequeueAfter(fmt.Errorf("backend busy"), time.Minute)
	d, ok = koperrors.RequeueAfterOf(failed)
	fmt.Println(failed, d, ok, koperrors.IsRequeueOnly(failed))
	// Output:
	// requeue after 30s 30s true true
	// backend busy 1m0s true false
}

func ExampleKinds() {
	// The label values of kopgo_reconcile_errors_total{kind}: a closed set.
	for _, k := range koperrors.Kinds() {
		fmt.Print(k, " ")
	}
	fmt.Println()
	// Output:
	// Internal NotFound Conflict Forbidden Invalid Timeout Unavailable Serialization IO Config AlreadyExists Expired
}

func ExampleIsRequeueOnly() {
	later := koperrors.RequeueAfter(nil, time.Minute)
	fmt.Println(koperrors.IsRequeueOnly(fmt.Errorf("sync: %w", later)))
	// A real error joined to a requeue is not dropped.
	fmt.Println(koperrors.IsRequeueOnly(koperrors.Join(later, fmt.Errorf("backend down"))))
	// Output:
	// true
	// false
}

func ExampleObjectOf() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "settings"}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	fmt.Println(koperrors.ObjectOf(cm))
	fmt.Println(koperrors.ObjectOf(ns))
	// Output:
	// ConfigMap team-a/settings
	// Namespace team-a
}

package errors_test

import (
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

func ExampleWrap() {
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	cause := apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", fmt.Errorf("the object has been modified"))

	err := koperrors.Wrap(cause, "apply", kopmeta.RefOf(deploy))
	fmt.Println(err)
	fmt.Println(koperrors.KindOf(err), koperrors.KindOf(err) == koperrors.Conflict, errors.Is(err, cause))
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

func ExampleKinds() {
	// The kinds behind kopgo_reconcile_errors_total{error_kind}: a closed set.
	for _, k := range koperrors.Kinds() {
		fmt.Print(k, " ")
	}
	fmt.Println()
	// Output:
	// Internal NotFound Conflict Forbidden Invalid Timeout Unavailable Serialization IO Config AlreadyExists Expired
}

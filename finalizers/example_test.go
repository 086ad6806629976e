package finalizers_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/finalizers"
)

// A reconciler adds its finalizer while the object lives, and removes it
// once its cleanup is done. Calls that find nothing to do send nothing.
func Example() {
	const cleanup = "example.com/cleanup"
	ctx := context.Background()
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Finalizers: []string{"other.io/keep"}}}
	c := fake.NewClientBuilder().WithObjects(obj).Build() // a manager's client in real life

	changed, err := finalizers.Add(ctx, c, obj, cleanup)
	fmt.Println(changed, err, obj.Finalizers)
	changed, err = finalizers.Add(ctx, c, obj, cleanup) // already there: no request
	fmt.Println(changed, err)

	// ... the object is deleted, the cleanup runs, then:
	changed, err = finalizers.Remove(ctx, c, obj, cleanup)
	fmt.Println(changed, err, obj.Finalizers)
	// Output:
	// true <nil> [other.io/keep example.com/cleanup]
	// false <nil>
	// true <nil> [other.io/keep]
}

func ExampleHas() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{"example.com/cleanup"}}}
	fmt.Println(finalizers.Has(cm, "example.com/cleanup"), finalizers.Has(cm, "other.io/x"))
	// Output: true false
}

func ExampleValidate() {
	fmt.Println(finalizers.Validate("example.com/cleanup"))
	err := finalizers.Validate("cleanup")
	fmt.Println(err)
	fmt.Println(koperrors.KindOf(err) == koperrors.Invalid)
	// Output:
	// <nil>
	// finalizer "cleanup": must be domain-qualified, e.g. example.com/cleanup
	// true
}

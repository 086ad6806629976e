package finalizers_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopgo/kopgo/finalizers"
)

func ExampleHas() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{"example.com/cleanup"}}}
	fmt.Println(finalizers.Has(cm, "example.com/cleanup"), finalizers.Has(cm, "other.io/x"))
	// Output: true false
}

func ExampleValidate() {
	fmt.Println(finalizers.Validate("example.com/cleanup"))
	fmt.Println(finalizers.Validate("cleanup"))
	// Output:
	// <nil>
	// finalizer "cleanup": must be domain-qualified, e.g. example.com/cleanup
}

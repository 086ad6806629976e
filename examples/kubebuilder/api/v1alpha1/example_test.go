package v1alpha1_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopgo/kopgo/examples/kubebuilder/api/v1alpha1"
	"github.com/kopgo/kopgo/status"
)

// With its four one-line methods, a ConfigSet is a status.Setter with
// observedGeneration: kopgo's status package maintains its conditions.
func ExampleConfigSet_conditions() {
	cs := &v1alpha1.ConfigSet{ObjectMeta: metav1.ObjectMeta{Name: "app", Generation: 3}}
	status.MarkReady(cs, "Applied", "2 ConfigMaps applied")
	status.SetObservedGeneration(cs)
	fmt.Println(status.IsTrue(cs, status.Ready), status.IsCurrent(cs), cs.Status.ObservedGeneration)

	cs.Generation = 4 // the spec changed: not current until reconciled again
	fmt.Println(status.IsTrue(cs, status.Ready), status.IsCurrent(cs))
	// Output:
	// true true 3
	// false false
}

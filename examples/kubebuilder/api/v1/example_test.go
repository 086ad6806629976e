package v1_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubebuilderv1 "github.com/kopgo/kopgo/examples/kubebuilder/api/v1"
	"github.com/kopgo/kopgo/status"
)

// A ConfigSet has no condition methods: kopgo's status package reaches
// its conditions and observedGeneration through an accessor.
func ExampleConfigSet_conditions() {
	cs := &kubebuilderv1.ConfigSet{ObjectMeta: metav1.ObjectMeta{Name: "app", Generation: 3}}
	s := status.Access(cs, &cs.Status.Conditions).WithObservedGeneration(&cs.Status.ObservedGeneration)
	status.SetError(s, nil) // a reconcile that succeeded
	fmt.Println(status.IsTrue(s, status.Ready), status.IsCurrent(s), cs.Status.ObservedGeneration)

	cs.Generation = 4 // the spec changed: not current until reconciled again
	fmt.Println(status.IsTrue(s, status.Ready), status.IsCurrent(s))
	// Output:
	// true true 3
	// false false
}

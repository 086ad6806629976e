package v1alpha1_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kopgo/kopgo/examples/database/api/v1alpha1"
)

// AddToScheme registers the Database kinds, as a manager's scheme needs.
func ExampleAddToScheme() {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	gvks, _, err := s.ObjectKinds(&v1alpha1.Database{})
	if err != nil {
		panic(err)
	}
	fmt.Println(gvks[0])
	// Output:
	// database.examples.kopgo.dev/v1alpha1, Kind=Database
}

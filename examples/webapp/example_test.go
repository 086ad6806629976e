package webapp_test

import (
	"fmt"

	"github.com/kopgo/kopgo/examples/webapp"
)

// The manifests controller-gen generated, as objects: what an installer or
// a test applies.
func Example() {
	crds, err := webapp.CRDs()
	if err != nil {
		panic(err)
	}
	clusterRole, role, err := webapp.RBAC()
	if err != nil {
		panic(err)
	}
	fmt.Println(crds[0].Name)
	fmt.Println(clusterRole.Name, "and", role.Namespace+"/"+role.Name)
	// Output:
	// webapps.webapp.examples.kopgo.dev
	// webapp-operator and webapp-system/webapp-operator
}

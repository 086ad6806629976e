package dnsrecord_test

import (
	"fmt"

	"github.com/kopgo/kopgo/examples/dnsrecord"
)

// The manifests controller-gen generated, as objects: what an installer or
// a test applies.
func Example() {
	crds, err := dnsrecord.CRDs()
	if err != nil {
		panic(err)
	}
	clusterRole, role, err := dnsrecord.RBAC()
	if err != nil {
		panic(err)
	}
	fmt.Println(crds[0].Name)
	fmt.Println(clusterRole.Name, "and", role.Namespace+"/"+role.Name)
	// Output:
	// dnsrecords.dns.examples.kopgo.dev
	// dnsrecord-operator and dnsrecord-system/dnsrecord-operator
}

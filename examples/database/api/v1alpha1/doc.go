// Package v1alpha1 is the Database API of kopgo's Database example
// operator (package github.com/kopgo/kopgo/examples/database): group
// database.examples.kopgo.dev, version v1alpha1, kind Database.
//
//	apiVersion: database.examples.kopgo.dev/v1alpha1
//	kind: Database
//	metadata:
//	  name: orders
//	spec:
//	  version: "17.2"
//	  replicas: 2
//	  storage: 10Gi
//
// The CustomResourceDefinition is generated from these types with
// controller-gen (`make generate`) into examples/database/config/crd, and
// the deep-copy methods into zz_generated.deepcopy.go.
//
// +kubebuilder:object:generate=true
// +groupName=database.examples.kopgo.dev
package v1alpha1

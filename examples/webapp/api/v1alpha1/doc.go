// Package v1alpha1 is the WebApp API of kopgo's example operator:
// group webapp.examples.kopgo.dev, version v1alpha1, kind WebApp.
//
// The CustomResourceDefinition and the deepcopy functions are generated from
// these types by controller-gen (`make generate`); the CRD manifest is in
// examples/webapp/config/crd.
//
// +kubebuilder:object:generate=true
// +groupName=webapp.examples.kopgo.dev
package v1alpha1

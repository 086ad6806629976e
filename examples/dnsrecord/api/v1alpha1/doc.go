// Package v1alpha1 is the DNSRecord API of kopgo's external-resource
// example: group dns.examples.kopgo.dev, version v1alpha1, kind DNSRecord.
// A DNSRecord asks for one record at a DNS provider outside the cluster;
// the operator (package operator) keeps it there.
//
// The CustomResourceDefinition and the deepcopy functions are generated from
// these types by controller-gen (`make generate`); the CRD manifest is in
// examples/dnsrecord/config/crd.
//
// +kubebuilder:object:generate=true
// +groupName=dns.examples.kopgo.dev
package v1alpha1

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the DNSRecord API.
	GroupVersion = schema.GroupVersion{Group: "dns.examples.kopgo.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the API's types with a scheme (apimachinery's,
	// so that the API package depends on apimachinery alone).
	SchemeBuilder = runtime.NewSchemeBuilder(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, &DNSRecord{}, &DNSRecordList{})
		metav1.AddToGroupVersion(s, GroupVersion)
		return nil
	})

	// AddToScheme adds the API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

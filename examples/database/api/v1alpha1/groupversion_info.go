package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the Database API.
	GroupVersion = schema.GroupVersion{Group: "database.examples.kopgo.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the API's types in a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds Database and DatabaseList to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Database{}, &DatabaseList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

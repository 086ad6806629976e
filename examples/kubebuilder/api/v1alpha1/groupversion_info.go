// +kubebuilder:object:generate=true
// +groupName=kubebuilder.examples.kopgo.dev

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the ConfigSet API.
	GroupVersion = schema.GroupVersion{Group: "kubebuilder.examples.kopgo.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the API's types with a scheme. It is
	// apimachinery's: controller-runtime's scheme.Builder is deprecated, so
	// that API packages depend on apimachinery alone.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &ConfigSet{}, &ConfigSetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

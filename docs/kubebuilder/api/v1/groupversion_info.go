// Package v1 is the CronJob API of kopgo's kubebuilder migration guide
// (docs/kubebuilder.md): the API of kubebuilder's CronJob tutorial,
// written again for the guide, in the group batch.guide.kopgo.dev. Its
// types have no kopgo methods, as a frozen API or a type from another
// module would not: the guide's controller reaches their conditions
// through status.Access.
//
// +kubebuilder:object:generate=true
// +groupName=batch.guide.kopgo.dev
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the CronJob API.
	GroupVersion = schema.GroupVersion{Group: "batch.guide.kopgo.dev", Version: "v1"}

	// SchemeBuilder registers the API's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, &CronJob{}, &CronJobList{})
		metav1.AddToGroupVersion(s, GroupVersion)
		return nil
	})

	// AddToScheme adds the API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

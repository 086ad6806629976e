package meta

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// Build returns the metadata as a typed ObjectMeta, or a [*ValidationError]
// listing every problem. The result shares nothing with the Builder.
func (b *Builder) Build() (metav1.ObjectMeta, error) {
	if errs := b.validate(target{}); len(errs) > 0 {
		return metav1.ObjectMeta{}, &ValidationError{Fields: errs}
	}
	return metav1.ObjectMeta{
		Name:            b.name,
		GenerateName:    b.generateName,
		Namespace:       b.namespace,
		Labels:          maps.Clone(b.labels),
		Annotations:     maps.Clone(b.annotations),
		Finalizers:      slices.Clone(b.finalizers),
		OwnerReferences: b.ownerRefs(),
	}, nil
}

// ApplyConfiguration returns the metadata in server-side apply form, or a
// [*ValidationError] listing every problem. It holds only the fields that
// were set, so a field manager applying it owns no other metadata: labels,
// annotations and finalizers are owned key by key, owner references by UID.
// It serialises to the same JSON as [Builder.Build]'s result.
func (b *Builder) ApplyConfiguration() (*metav1ac.ObjectMetaApplyConfiguration, error) {
	if errs := b.validate(target{}); len(errs) > 0 {
		return nil, &ValidationError{Fields: errs}
	}
	ac := metav1ac.ObjectMeta()
	if b.name != "" {
		ac.WithName(b.name)
	}
	if b.generateName != "" {
		ac.WithGenerateName(b.generateName)
	}
	if b.namespace != "" {
		ac.WithNamespace(b.namespace)
	}
	// WithLabels, WithAnnotations and WithFinalizers copy their arguments.
	ac.WithLabels(b.labels).WithAnnotations(b.annotations).WithFinalizers(b.finalizers...)
	for _, ref := range b.ownerRefs() {
		ac.WithOwnerReferences(ownerRefApplyConfiguration(ref))
	}
	return ac, nil
}

// ownerRefApplyConfiguration converts a reference, leaving unset what is
// unset (nil controller and blockOwnerDeletion).
func ownerRefApplyConfiguration(ref metav1.OwnerReference) *metav1ac.OwnerReferenceApplyConfiguration {
	ac := metav1ac.OwnerReference().
		WithAPIVersion(ref.APIVersion).
		WithKind(ref.Kind).
		WithName(ref.Name).
		WithUID(ref.UID)
	if ref.Controller != nil {
		ac.WithController(*ref.Controller)
	}
	if ref.BlockOwnerDeletion != nil {
		ac.WithBlockOwnerDeletion(*ref.BlockOwnerDeletion)
	}
	return ac
}

// ownerRefs returns deep copies of the owner references, nil when there are
// none (as a decoded ObjectMeta has).
func (b *Builder) ownerRefs() []metav1.OwnerReference {
	if len(b.owners) == 0 {
		return nil
	}
	refs := make([]metav1.OwnerReference, len(b.owners))
	for i, o := range b.owners {
		refs[i] = *o.ref.DeepCopy()
	}
	return refs
}

package meta

import (
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ApplyTo writes the metadata onto obj, merging with what obj has: labels
// and annotations are added or overwritten key by key, finalizers and owner
// references are added when missing (an owner reference with the same UID is
// replaced). Nothing obj already has is dropped. A different name or
// namespace already set, or a second controller, is an error and leaves obj
// unchanged.
func (b *Builder) ApplyTo(obj client.Object) error {
	if err := b.validate(); err != nil {
		return err
	}
	md := field.NewPath("metadata")
	var errs field.ErrorList
	if have := obj.GetName(); b.name != "" && have != "" && have != b.name {
		errs = append(errs, field.Invalid(md.Child("name"), have, fmt.Sprintf("object is already named %q, builder says %q", have, b.name)))
	}
	if have := obj.GetNamespace(); b.namespace != "" && have != "" && have != b.namespace {
		errs = append(errs, field.Invalid(md.Child("namespace"), have, fmt.Sprintf("object is already in %q, builder says %q", have, b.namespace)))
	}
	refs := slices.Clone(obj.GetOwnerReferences())
	for _, ref := range b.ownerRefs() {
		i := slices.IndexFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == ref.UID })
		if i >= 0 {
			refs[i] = ref
		} else {
			refs = append(refs, ref)
		}
	}
	if err := ownerErrors(md.Child("ownerReferences"), ownersOf(refs)); len(err) > 0 {
		errs = append(errs, err...)
	}
	if len(errs) > 0 {
		return &ValidationError{Fields: errs}
	}

	if b.name != "" {
		obj.SetName(b.name)
	}
	if b.generateName != "" {
		obj.SetGenerateName(b.generateName)
	}
	if b.namespace != "" {
		obj.SetNamespace(b.namespace)
	}
	obj.SetLabels(merge(obj.GetLabels(), b.labels))
	obj.SetAnnotations(merge(obj.GetAnnotations(), b.annotations))
	fins := obj.GetFinalizers()
	for _, f := range b.finalizers {
		if !slices.Contains(fins, f) {
			fins = append(fins, f)
		}
	}
	obj.SetFinalizers(fins)
	obj.SetOwnerReferences(refs)
	return nil
}

func merge(into, from map[string]string) map[string]string {
	if len(from) == 0 {
		return into
	}
	if into == nil {
		into = make(map[string]string, len(from))
	}
	maps.Copy(into, from)
	return into
}

func ownersOf(refs []metav1.OwnerReference) []owner {
	out := make([]owner, len(refs))
	for i, r := range refs {
		out[i] = owner{ref: r}
	}
	return out
}

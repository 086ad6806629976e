package meta

import (
	"errors"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/internal/ownerref"
)

// ApplyTo writes the metadata onto obj, merging with what obj already has
// and dropping nothing:
//
//   - labels and annotations are set key by key; other keys stay;
//   - finalizers are appended when missing; others stay, in their order;
//   - owner references are appended, or replace the one to the same object
//     (same group, kind and name: a re-created owner's new UID replaces the
//     old), except that a controller reference is never demoted; others
//     stay;
//   - name, generateName and namespace are set when the Builder has them.
//
// obj must not already have a different name or namespace, nor a controller
// other than the one the Builder sets; each is an error naming both values.
// A Builder without a name may be applied to an object that has one. On any
// error ([*ValidationError] listing every problem) obj is left unchanged.
//
// obj gets fresh maps and slices, so ApplyTo never writes through to maps
// obj shares with something else, such as an object in an informer cache
// that was copied shallowly.
func (b *Builder) ApplyTo(obj client.Object) error {
	if ownerref.IsNil(obj) {
		return errors.New("apply metadata to a nil object")
	}
	t := target{
		name:         obj.GetName(),
		generateName: obj.GetGenerateName(),
		namespace:    obj.GetNamespace(),
		uid:          obj.GetUID(),
		annotations:  obj.GetAnnotations(),
		finalizers:   obj.GetFinalizers(),
		ownerRefs:    obj.GetOwnerReferences(),
	}
	if errs := b.validate(t); len(errs) > 0 {
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
	if len(b.labels) > 0 {
		obj.SetLabels(mergeMaps(obj.GetLabels(), b.labels))
	}
	if len(b.annotations) > 0 {
		obj.SetAnnotations(mergeMaps(t.annotations, b.annotations))
	}
	if len(b.finalizers) > 0 {
		merged, _ := mergeFinalizers(t.finalizers, b.finalizers)
		obj.SetFinalizers(merged)
	}
	if len(b.owners) > 0 {
		merged, _ := mergeOwnerRefs(t.ownerRefs, b.owners)
		obj.SetOwnerReferences(merged)
	}
	return nil
}

// mergeMaps returns a new map holding base overlaid with add.
func mergeMaps(base, add map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(add))
	maps.Copy(out, base)
	maps.Copy(out, add)
	return out
}

// mergeFinalizers returns a new slice, existing followed by those of add it
// lacks, and the index each of add has in it.
func mergeFinalizers(existing, add []string) (merged []string, at []int) {
	merged = slices.Clone(existing)
	at = make([]int, len(add))
	for i, f := range add {
		j := slices.Index(merged, f)
		if j < 0 {
			j = len(merged)
			merged = append(merged, f)
		}
		at[i] = j
	}
	return merged, at
}

// mergeOwnerRefs returns existing with add merged in (see ownerref.Merge;
// a new slice of deep copies unless add is empty), and the index each of
// add has in the result.
func mergeOwnerRefs(existing []metav1.OwnerReference, add []owner) (merged []metav1.OwnerReference, at []int) {
	merged = existing
	at = make([]int, len(add))
	for i, o := range add {
		merged, at[i] = ownerref.Merge(merged, o.ref)
	}
	return merged, at
}

package resources

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// SetLabels sets these labels on obj and reports whether anything changed.
// Its other labels and every other field are left alone: the request is a
// JSON merge patch of metadata.labels with only the keys that differ, and
// with no resourceVersion precondition, so it never conflicts with a
// concurrent writer of other fields (or other labels), however stale obj
// is. When obj already carries every label with the same value it sends
// nothing and returns false. On success obj holds the object as the server
// returned it.
//
// The comparison is with obj as given: an obj read from a cache a moment
// ago is the intended input. It needs only the Patch method of c and obj's
// namespace and name; the API server rejects an obj
// that has no namespace for a namespaced kind (NotFound).
func SetLabels(ctx context.Context, c client.Writer, obj client.Object, labels map[string]string) (bool, error) {
	return patchMap(ctx, c, obj, "labels", obj.GetLabels(), labels, nil)
}

// RemoveLabels removes the labels with these keys from obj and reports
// whether any was there; see [SetLabels]. A removal is a null in the merge
// patch, so only these keys go.
func RemoveLabels(ctx context.Context, c client.Writer, obj client.Object, keys ...string) (bool, error) {
	return patchMap(ctx, c, obj, "labels", obj.GetLabels(), nil, keys)
}

// SetAnnotations is [SetLabels] for metadata.annotations.
func SetAnnotations(ctx context.Context, c client.Writer, obj client.Object, annotations map[string]string) (bool, error) {
	return patchMap(ctx, c, obj, "annotations", obj.GetAnnotations(), annotations, nil)
}

// RemoveAnnotations is [RemoveLabels] for metadata.annotations.
func RemoveAnnotations(ctx context.Context, c client.Writer, obj client.Object, keys ...string) (bool, error) {
	return patchMap(ctx, c, obj, "annotations", obj.GetAnnotations(), nil, keys)
}

// patchMap sends a merge patch of metadata.<field> that sets set and
// removes remove, with only the keys that differ from have.
func patchMap(ctx context.Context, c client.Writer, obj client.Object, field string, have, set map[string]string, remove []string) (bool, error) {
	op := "set " + field + " of"
	if len(remove) > 0 {
		op = "remove " + field + " of"
	}
	if obj.GetName() == "" {
		return false, koperrors.WrapKind(koperrors.Invalid, fmt.Errorf("no name given"), op, kopmeta.RefOf(obj))
	}
	changes := map[string]*string{}
	for k, v := range set {
		if cur, ok := have[k]; !ok || cur != v {
			changes[k] = &v
		}
	}
	for _, k := range slices.Compact(slices.Sorted(slices.Values(remove))) {
		if _, ok := have[k]; ok {
			changes[k] = nil // null deletes the key in a JSON merge patch
		}
	}
	if len(changes) == 0 {
		return false, nil
	}
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{field: changes}})
	if err != nil {
		return false, koperrors.WrapKind(koperrors.Serialization, err, op, kopmeta.RefOf(obj))
	}
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data)); err != nil {
		return false, koperrors.Wrap(err, op, kopmeta.RefOf(obj))
	}
	return true, nil
}

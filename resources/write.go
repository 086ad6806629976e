package resources

import (
	"context"
	"encoding/json"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
)

// Delete deletes obj and reports whether it did: an object already gone is
// (false, nil). Deletion propagates in the background unless opts say
// otherwise (client.PropagationPolicy); add client.Preconditions to delete
// only this exact object (by UID) or version.
func Delete(ctx context.Context, c client.Writer, obj client.Object, opts ...client.DeleteOption) (bool, error) {
	all := append([]client.DeleteOption{client.PropagationPolicy(metav1.DeletePropagationBackground)}, opts...)
	err := c.Delete(ctx, obj, all...)
	if koperrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, koperrors.Wrap(err, "delete", koperrors.ObjectOf(obj))
	}
	return true, nil
}

// SetLabels sets labels on obj, keeping its other labels and every other
// field, and reports whether it sent a request: none when obj already has
// them. It is a merge patch of metadata.labels alone, with no
// resourceVersion precondition, so concurrent writers of other fields never
// conflict with it.
func SetLabels(ctx context.Context, c client.Writer, obj client.Object, labels map[string]string) (bool, error) {
	return patchMap(ctx, c, obj, "labels", obj.GetLabels(), labels, nil)
}

// RemoveLabels removes the labels with these keys; see [SetLabels].
func RemoveLabels(ctx context.Context, c client.Writer, obj client.Object, keys ...string) (bool, error) {
	return patchMap(ctx, c, obj, "labels", obj.GetLabels(), nil, keys)
}

// SetAnnotations sets annotations on obj; see [SetLabels].
func SetAnnotations(ctx context.Context, c client.Writer, obj client.Object, annotations map[string]string) (bool, error) {
	return patchMap(ctx, c, obj, "annotations", obj.GetAnnotations(), annotations, nil)
}

// RemoveAnnotations removes the annotations with these keys; see [SetLabels].
func RemoveAnnotations(ctx context.Context, c client.Writer, obj client.Object, keys ...string) (bool, error) {
	return patchMap(ctx, c, obj, "annotations", obj.GetAnnotations(), nil, keys)
}

func patchMap(ctx context.Context, c client.Writer, obj client.Object, field string, have, set map[string]string, remove []string) (bool, error) {
	changes := map[string]*string{}
	for k, v := range set {
		if cur, ok := have[k]; !ok || cur != v {
			changes[k] = &v
		}
	}
	for _, k := range remove {
		if _, ok := have[k]; ok {
			changes[k] = nil // null removes the key in a merge patch
		}
	}
	if len(changes) == 0 {
		return false, nil
	}
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{field: changes}})
	if err != nil {
		return false, koperrors.WrapKind(koperrors.Serialization, err, "patch "+field, koperrors.ObjectOf(obj))
	}
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data)); err != nil {
		return false, koperrors.Wrap(err, "patch "+field, koperrors.ObjectOf(obj))
	}
	return true, nil
}

// EnsureNamespace creates the namespace name with labels if it does not
// exist and reports whether it created it. An existing namespace is left as
// it is.
func EnsureNamespace(ctx context.Context, c client.Client, name string, labels map[string]string) (bool, error) {
	ns := &corev1.Namespace{}
	ns.Name, ns.Labels = name, maps.Clone(labels)
	err := c.Create(ctx, ns)
	switch {
	case err == nil:
		return true, nil
	case koperrors.IsConflict(err): // AlreadyExists
		return false, nil
	default:
		return false, koperrors.Wrap(err, "ensure", koperrors.ObjectOf(ns))
	}
}

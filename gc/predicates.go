package gc

import (
	"context"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/scope"
)

// OwnerExists keeps an object when at least one of its owners still exists:
// an object with the owner reference's kind and name and the same UID (an
// owner deleted and re-created under the same name is a different owner).
// An object without owner references is not kept. Owners are read as
// metadata through c, so a cached client answers from its cache.
func OwnerExists(c client.Client) Predicate {
	return func(ctx context.Context, obj *metav1.PartialObjectMetadata) (bool, error) {
		for _, ref := range obj.OwnerReferences {
			exists, err := ownerExists(ctx, c, obj.Namespace, ref)
			if err != nil || exists {
				return exists, err
			}
		}
		return false, nil
	}
}

func ownerExists(ctx context.Context, c client.Client, namespace string, ref metav1.OwnerReference) (bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false, koperrors.WrapKind(koperrors.Invalid, err, "read owner reference", kopmeta.ObjectRef{})
	}
	gvk := gv.WithKind(ref.Kind)
	// Owners are in the dependent's namespace or cluster-scoped.
	s, err := scope.Of(c.RESTMapper(), gvk, namespace)
	switch {
	case apimeta.IsNoMatchError(err):
		return false, nil // the owner's kind is not served any more: it cannot exist
	case err != nil:
		return false, err
	}
	owner := &metav1.PartialObjectMetadata{}
	owner.SetGroupVersionKind(gvk)
	key := client.ObjectKey{Namespace: s.Namespace(), Name: ref.Name}
	if err := c.Get(ctx, key, owner); err != nil {
		if koperrors.KindOf(err) == koperrors.NotFound {
			return false, nil
		}
		return false, err
	}
	return owner.UID == ref.UID, nil
}

// Desired keeps the objects named in keys: the children a parent still wants.
func Desired(keys ...types.NamespacedName) Predicate {
	set := make(map[types.NamespacedName]struct{}, len(keys))
	for _, k := range keys {
		set[k] = struct{}{}
	}
	return func(_ context.Context, obj *metav1.PartialObjectMetadata) (bool, error) {
		_, ok := set[types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}]
		return ok, nil
	}
}

// Any keeps an object when any of preds keeps it.
func Any(preds ...Predicate) Predicate {
	return func(ctx context.Context, obj *metav1.PartialObjectMetadata) (bool, error) {
		for _, p := range preds {
			if keep, err := p(ctx, obj); err != nil || keep {
				return keep, err
			}
		}
		return false, nil
	}
}

// NotControlledBy keeps every object whose controller is not the object with
// this UID: with it, a collection can only ever delete that owner's children.
func NotControlledBy(uid types.UID) Predicate {
	return func(_ context.Context, obj *metav1.PartialObjectMetadata) (bool, error) {
		ctrl := metav1.GetControllerOfNoCopy(obj)
		return ctrl == nil || ctrl.UID != uid, nil
	}
}

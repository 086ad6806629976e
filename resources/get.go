package resources

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/scope"
)

// Get reads the object of type T called name in scope s:
//
//	cm, err := resources.Get[corev1.ConfigMap](ctx, c, scope.Namespaced("shop"), "settings")
//
// The scope is checked against T's kind first: a mistake (scope.Cluster for
// a ConfigMap) is an error of Kind Invalid and sends no request. A missing
// object is an error of Kind NotFound (koperrors.KindOf(err) == koperrors.NotFound) that reads
// "get ConfigMap shop/settings: ...". On error the returned object is nil.
//
// For kinds without a Go type (unstructured.Unstructured,
// metav1.PartialObjectMetadata) use [GetInto].
func Get[T any, P Object[T]](ctx context.Context, r Reader, s scope.Scope, name string) (P, error) {
	obj := P(new(T))
	if err := GetInto(ctx, r, s, name, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// Find is [Get] that reports a missing object as found == false with a nil
// error, so callers need no IgnoreNotFound dance:
//
//	cm, found, err := resources.Find[corev1.ConfigMap](ctx, c, scope.Namespaced("shop"), "settings")
//
// The object is nil unless found. For an object to fill, use [GetInto] and
// koperrors.KindOf(err) == koperrors.NotFound.
func Find[T any, P Object[T]](ctx context.Context, r Reader, s scope.Scope, name string) (P, bool, error) {
	obj := P(new(T))
	err := GetInto(ctx, r, s, name, obj)
	switch {
	case koperrors.KindOf(err) == koperrors.NotFound:
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return obj, true, nil
}

// GetInto is [Get] that fills obj, for any object the client can read: a
// typed object, an unstructured.Unstructured or a
// metav1.PartialObjectMetadata with its apiVersion and kind set.
func GetInto(ctx context.Context, r Reader, s scope.Scope, name string, obj client.Object) error {
	o, err := target(r, "get", s, obj, name)
	if err != nil {
		return err
	}
	if err := r.Get(ctx, client.ObjectKey{Namespace: s.Namespace(), Name: name}, obj); err != nil {
		return koperrors.Wrap(err, "get", o)
	}
	return nil
}

package gc

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/telemetry"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/scope"
)

// Delete deletes the objects given: ones the caller has already read and
// judged (a controller's observed children, say), or ones named by kind,
// namespace and name alone:
//
//	res, err := gc.Delete(ctx, c, []client.Object{
//		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "old"}},
//	}, client.GracePeriodSeconds(0))
//	deleted := len(res.Deleted) == 1 // false: it was gone already
//
// An object already gone is not an error and is not in [Result.Deleted].
// Each object's namespace is checked against its kind's scope first (see
// [scope.Scope.Check]): a namespaced object without a namespace is an error
// of Kind Invalid, never a silent "already gone", and sends no request.
//
// An object that carries a UID (one that was read) is deleted with that UID
// as a precondition, so an object re-created under the same name is not
// touched; an object already being deleted has only the finalizers in
// [OwnedFinalizers] removed and is reported in [Result.Stuck] if others
// remain. An object named without a UID is read once more after its delete,
// to see whether finalizers hold it. A client.Preconditions option that
// does not hold is an error of Kind Conflict, and nothing is deleted. Delete
// sends no list: with a manager's client, [Collect] and [Prune] start a
// metadata informer for each kind they list, next to any typed one.
//
// Each object's kind comes from its TypeMeta or c's scheme. Errors on single
// objects do not stop the others; they are joined and returned with the
// Result of what was done.
func Delete(ctx context.Context, c client.Client, objs []client.Object, opts ...client.DeleteOption) (res Result, err error) {
	o := buildOptions(opts)
	ctx, span := telemetry.StartSpan(ctx, "gc delete", attribute.Int("kopgo.gc.objects", len(objs)))
	defer func() { o.finish(span, res, err) }()
	var errs []error
	for _, obj := range objs {
		m, err := partialOf(c, obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, dispose(ctx, c, m, o, &res))
	}
	return res, errors.Join(errs...)
}

// partialOf is obj's metadata with its kind, once its namespace is checked
// against the kind's scope.
func partialOf(c client.Client, obj client.Object) (*metav1.PartialObjectMetadata, error) {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return nil, koperrors.WrapKind(koperrors.Invalid, err, "delete", kopmeta.RefOf(obj))
	}
	ref := kopmeta.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if obj.GetName() == "" {
		return nil, koperrors.WrapKind(koperrors.Invalid, fmt.Errorf("no name given"), "delete", ref)
	}
	m := apimeta.AsPartialObjectMetadata(obj) // a copy: the caller's object stays untouched
	m.SetGroupVersionKind(gvk)
	s, err := scope.Of(c.RESTMapper(), gvk, obj.GetNamespace())
	if err == nil {
		err = s.ApplyTo(m)
	}
	if err != nil {
		return nil, koperrors.Wrap(err, "delete", ref)
	}
	return m, nil
}

// dispose deletes obj, or finishes its deletion if it is already being
// deleted.
func dispose(ctx context.Context, c client.Client, obj *metav1.PartialObjectMetadata, o options, res *Result) error {
	if kopmeta.IsBeingDeleted(obj) {
		return finishDeletion(ctx, c, obj, o, res)
	}
	return deleteOne(ctx, c, obj, o, res)
}

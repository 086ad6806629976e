package gc

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/telemetry"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// Delete deletes objects the caller has already read and judged (a
// controller's observed children, say), the way [Collect] deletes what its
// predicate does not keep: each with a UID precondition, so an object
// re-created under the same name is not touched; an object already being
// deleted has only the finalizers in [OwnedFinalizers] removed and is
// reported in [Result.Stuck] if others remain. It sends no list: with a
// manager's client, Collect and [Prune] start a metadata informer for each
// kind they list, next to any typed one.
//
// Each object's kind comes from its TypeMeta or c's scheme. Errors on single
// objects do not stop the others; they are joined and returned with the
// Result of what was done.
func Delete(ctx context.Context, c client.Client, objs []client.Object, opts ...Option) (res Result, err error) {
	o := buildOptions(opts)
	ctx, span := telemetry.StartSpan(ctx, "gc delete", attribute.Int("kopgo.gc.objects", len(objs)))
	defer func() { o.finish(span, res, err) }()
	var errs []error
	for _, obj := range objs {
		gvk, err := apiutil.GVKForObject(obj, c.Scheme())
		if err != nil {
			errs = append(errs, koperrors.WrapKind(koperrors.Invalid, err, "delete", kopmeta.RefOf(obj)))
			continue
		}
		m := apimeta.AsPartialObjectMetadata(obj)
		m.SetGroupVersionKind(gvk)
		errs = append(errs, dispose(ctx, c, m, o, &res))
	}
	return res, errors.Join(errs...)
}

// dispose deletes obj, or finishes its deletion if it is already being
// deleted.
func dispose(ctx context.Context, c client.Client, obj *metav1.PartialObjectMetadata, o Options, res *Result) error {
	if kopmeta.IsBeingDeleted(obj) {
		return finishDeletion(ctx, c, obj, o, res)
	}
	return deleteOne(ctx, c, obj, o, res)
}

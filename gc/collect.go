package gc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"go.opentelemetry.io/otel/attribute"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/finalizers"
	"github.com/kopgo/kopgo/internal/telemetry"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/scope"
)

// Stuck is an object that is being deleted but waits on finalizers the
// caller does not own.
type Stuck struct {
	kopmeta.ObjectRef
	// Finalizers are the finalizers still pending.
	Finalizers []string
}

// Result says what a collection did. Deleted and FinalizersRemoved are what
// it changed; Stuck is what it could not finish and left to others.
type Result struct {
	// Deleted are the objects whose deletion this call requested and the
	// server accepted (or, with client.DryRunAll, would have). An object
	// already gone is not in it, and is no error.
	Deleted []kopmeta.ObjectRef
	// FinalizersRemoved are objects being deleted from which the caller's
	// own finalizers were removed.
	FinalizersRemoved []kopmeta.ObjectRef
	// Stuck are objects being deleted that still wait on other finalizers.
	Stuck []Stuck
	// Kept counts the objects the keep predicate kept.
	Kept int
}

func (r *Result) merge(o Result) {
	r.Deleted = append(r.Deleted, o.Deleted...)
	r.FinalizersRemoved = append(r.FinalizersRemoved, o.FinalizersRemoved...)
	r.Stuck = append(r.Stuck, o.Stuck...)
	r.Kept += o.Kept
}

// Predicate decides whether to keep an object. It sees metadata only.
type Predicate func(ctx context.Context, obj *metav1.PartialObjectMetadata) (keep bool, err error)

// Collect lists the objects of kind gvk in scope s that match sel, metadata
// only, and deletes those that keep does not keep. It reads through c, so a
// cached client lists from its cache. Deletes carry a UID precondition: an
// object re-created under the same name meanwhile is not touched.
//
// An object already being deleted is not judged by keep: the finalizers in
// [OwnedFinalizers] are removed from it, and it is reported in
// [Result.Stuck] if others remain. Other finalizers are never touched.
//
// An empty selector is refused: it would judge every object of the kind.
// Errors on single objects do not stop the collection; they are joined and
// returned with the Result of what was done.
func Collect(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, s scope.Scope, sel labels.Selector, keep Predicate, opts ...client.DeleteOption) (res Result, err error) {
	o := buildOptions(opts)
	ctx, span := telemetry.StartSpan(ctx, "gc collect", telemetry.AttrObjectKind.String(gvk.Kind), attribute.String("kopgo.scope", s.String()))
	defer func() { o.finish(span, res, err) }()
	op := kopmeta.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: s.Namespace()}
	if err := s.Check(c.RESTMapper(), gvk); err != nil {
		return Result{}, koperrors.Wrap(err, "collect", op)
	}
	if isEverything(sel) {
		return Result{}, koperrors.WrapKind(koperrors.Invalid, fmt.Errorf("refusing to collect every %s in %s: give a label selector", gvk.Kind, s), "collect", op)
	}
	if keep == nil {
		return Result{}, koperrors.Errorf(koperrors.Invalid, "collect %s: keep predicate is nil", gvk.Kind)
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	listOpts := append(s.ListOptions(), client.MatchingLabelsSelector{Selector: sel})
	if err := c.List(ctx, list, listOpts...); err != nil {
		return Result{}, koperrors.Wrap(err, "collect", op)
	}
	items := list.Items
	sort.Slice(items, func(i, j int) bool {
		return items[i].Namespace+"/"+items[i].Name < items[j].Namespace+"/"+items[j].Name
	})

	var errs []error
	for i := range items {
		obj := &items[i]
		obj.SetGroupVersionKind(gvk)
		if !kopmeta.IsBeingDeleted(obj) { // one being deleted is not judged: dispose finishes it
			kept, err := keep(ctx, obj)
			if err != nil {
				errs = append(errs, koperrors.Wrap(err, "decide whether to keep", refOf(obj)))
				continue
			}
			if kept {
				res.Kept++
				continue
			}
		}
		errs = append(errs, dispose(ctx, c, obj, o, &res))
	}
	return res, errors.Join(errs...)
}

// deleteOne deletes obj if it is still the object that was read (when its
// UID is known), then finishes its deletion if it has finalizers.
func deleteOne(ctx context.Context, c client.Client, obj *metav1.PartialObjectMetadata, o options, res *Result) error {
	ref := refOf(obj)
	uid := obj.UID
	err := c.Delete(ctx, obj, o.forObject(obj))
	switch {
	case koperrors.KindOf(err) == koperrors.NotFound:
		return nil // gone already
	case koperrors.KindOf(err) == koperrors.Conflict && uid != "" && o.server.Preconditions == nil:
		return nil // the UID precondition failed: a new object took the name
	case err != nil:
		return koperrors.Wrap(err, "delete", ref)
	}
	res.Deleted = append(res.Deleted, ref)
	// An object given by name alone may have finalizers nobody has seen.
	if o.dryRun() || (uid != "" && len(obj.Finalizers) == 0) {
		return nil
	}
	// It may wait on finalizers now: read it again and remove ours.
	fresh := &metav1.PartialObjectMetadata{}
	fresh.SetGroupVersionKind(obj.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
		if koperrors.KindOf(err) == koperrors.NotFound {
			return nil
		}
		return koperrors.Wrap(err, "read after delete", ref)
	}
	if (uid != "" && fresh.UID != uid) || fresh.DeletionTimestamp == nil || len(fresh.Finalizers) == 0 {
		return nil // re-created meanwhile, or not held by finalizers
	}
	return finishDeletion(ctx, c, fresh, o, res)
}

// finishDeletion removes the caller's own finalizers from an object that is
// being deleted (through [finalizers.RemoveAll], which never drops another
// writer's) and reports it as stuck if others remain.
func finishDeletion(ctx context.Context, c client.Client, obj *metav1.PartialObjectMetadata, o options, res *Result) error {
	ref, uid := refOf(obj), obj.UID
	owned := slices.DeleteFunc(slices.Clone(o.owned), func(f string) bool { return !slices.Contains(obj.Finalizers, f) })
	if len(owned) > 0 && !o.dryRun() {
		changed, err := finalizers.RemoveAll(ctx, c, obj, owned...)
		if err != nil {
			return err
		}
		if !changed {
			// Ours were listed but nothing changed: the object went away
			// (RemoveAll treats that as success) or someone removed them.
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				if koperrors.KindOf(err) == koperrors.NotFound {
					return nil
				}
				return koperrors.Wrap(err, "read finalizers", ref)
			}
		} else {
			res.FinalizersRemoved = append(res.FinalizersRemoved, ref)
		}
		if obj.UID != uid {
			return nil // gone and re-created meanwhile
		}
	}
	if foreign := slices.DeleteFunc(slices.Clone(obj.Finalizers), func(f string) bool {
		return slices.Contains(o.owned, f)
	}); len(foreign) > 0 {
		res.Stuck = append(res.Stuck, Stuck{ObjectRef: ref, Finalizers: foreign})
	}
	return nil
}

func refOf(obj *metav1.PartialObjectMetadata) kopmeta.ObjectRef {
	gvk := obj.GroupVersionKind()
	return kopmeta.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.Namespace, Name: obj.Name}
}

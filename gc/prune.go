package gc

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/scope"
)

// Prune deletes the children of parent that it no longer wants: objects of
// the given kinds that match sel (the label the parent's children carry) and
// are controlled by parent (controller owner reference with parent's UID),
// except those in desired. Nothing else is touched: not an object of another
// kind, not an unlabelled one, not one another controller manages, even if
// it carries the label. Namespaced kinds are looked for in the parent's
// namespace (or, for a cluster-scoped parent, everywhere).
func Prune(ctx context.Context, c client.Client, parent client.Object, sel labels.Selector, kinds []schema.GroupVersionKind, desired []kopmeta.ObjectRef, opts ...client.DeleteOption) (Result, error) {
	if parent.GetUID() == "" {
		return Result{}, koperrors.WrapKind(koperrors.Invalid, errNoUID, "prune children of", kopmeta.RefOf(parent))
	}
	byKind := map[schema.GroupKind][]types.NamespacedName{}
	for _, d := range desired {
		byKind[d.GroupKind()] = append(byKind[d.GroupKind()], types.NamespacedName{Namespace: d.Namespace, Name: d.Name})
	}
	var res Result
	var errs []error
	for _, gvk := range kinds {
		// The parent's namespace; every namespace for a cluster-scoped parent.
		s, err := scope.Of(c.RESTMapper(), gvk, parent.GetNamespace())
		if err != nil {
			errs = append(errs, koperrors.Wrap(err, "prune", kopmeta.ObjectRef{Group: gvk.Group, Kind: gvk.Kind}))
			continue
		}
		keep := Any(NotControlledBy(parent.GetUID()), Desired(byKind[gvk.GroupKind()]...))
		r, err := Collect(ctx, c, gvk, s, sel, keep, opts...)
		res.merge(r)
		errs = append(errs, err)
	}
	return res, errors.Join(errs...)
}

var errNoUID = errors.New("parent has no UID: it must be read from the API server")

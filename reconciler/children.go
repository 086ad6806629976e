package reconciler

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// Children are the observed children of one parent, by kind, as [Sync]
// hands them to a [SyncFunc]. The objects are copies the sync function may
// read (changing them changes nothing in the cluster). The zero value holds
// no children.
//
// Typed child kinds are read back typed (*appsv1.Deployment); use
// [ChildOf] and [ChildrenOf] for them, or Get and List with an example
// object of the kind (needed for unstructured kinds).
type Children struct {
	scheme *runtime.Scheme
	byKind map[schema.GroupKind][]client.Object
}

// NewChildren returns the Children holding objs, grouped by the kinds the
// scheme (or, for unstructured objects, their apiVersion and kind) gives
// them: for unit tests of a SyncFunc. Errors are of Kind Invalid.
func NewChildren(scheme *runtime.Scheme, objs ...client.Object) (Children, error) {
	c := Children{scheme: scheme, byKind: map[schema.GroupKind][]client.Object{}}
	for _, o := range objs {
		gvk, err := apiutil.GVKForObject(o, scheme)
		if err != nil {
			return Children{}, koperrors.WrapKind(koperrors.Invalid, err, "add child", kopmeta.RefOf(o))
		}
		c.byKind[gvk.GroupKind()] = append(c.byKind[gvk.GroupKind()], o)
	}
	for gk, objs := range c.byKind {
		c.byKind[gk] = sortByKey(objs)
	}
	return c, nil
}

// List returns the observed children of kind's kind (an example object,
// such as &corev1.Service{}), ordered by namespace and name, or nil.
func (c Children) List(kind client.Object) []client.Object {
	gk, ok := c.groupKind(kind)
	if !ok {
		return nil
	}
	return slices.Clone(c.byKind[gk])
}

// Get returns the observed child of kind's kind with this name, or nil. For
// a cluster-scoped parent whose children of one kind live in several
// namespaces, use List.
func (c Children) Get(kind client.Object, name string) client.Object {
	gk, ok := c.groupKind(kind)
	if !ok {
		return nil
	}
	for _, o := range c.byKind[gk] {
		if o.GetName() == name {
			return o
		}
	}
	return nil
}

// Len returns the number of observed children of every kind.
func (c Children) Len() int {
	n := 0
	for _, objs := range c.byKind {
		n += len(objs)
	}
	return n
}

func (c Children) groupKind(kind client.Object) (schema.GroupKind, bool) {
	if kind == nil || c.byKind == nil {
		return schema.GroupKind{}, false
	}
	if u, ok := kind.(runtime.Unstructured); ok {
		gvk := u.GetObjectKind().GroupVersionKind()
		return gvk.GroupKind(), gvk.Kind != ""
	}
	if c.scheme == nil {
		return schema.GroupKind{}, false
	}
	gvk, err := apiutil.GVKForObject(kind, c.scheme)
	return gvk.GroupKind(), err == nil
}

// ChildOf returns the observed child of Go type C (such as
// *appsv1.Deployment) with this name, and whether there is one:
//
//	dep, ok := reconciler.ChildOf[*appsv1.Deployment](observed, app.Name)
//
// For unstructured kinds use [Children.Get].
func ChildOf[C client.Object](c Children, name string) (C, bool) {
	for _, objs := range c.byKind {
		for _, o := range objs {
			if t, ok := o.(C); ok && o.GetName() == name {
				return t, true
			}
		}
	}
	var zero C
	return zero, false
}

// ChildrenOf returns the observed children of Go type C, ordered by
// namespace and name. For unstructured kinds use [Children.List].
func ChildrenOf[C client.Object](c Children) []C {
	var out []C
	for _, objs := range c.byKind {
		for _, o := range objs {
			if t, ok := o.(C); ok {
				out = append(out, t)
			}
		}
	}
	slices.SortFunc(out, func(a, b C) int { return compareKey(a, b) })
	return out
}

func sortByKey(objs []client.Object) []client.Object {
	slices.SortFunc(objs, func(a, b client.Object) int { return compareKey(a, b) })
	return objs
}

func compareKey(a, b client.Object) int {
	return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
}

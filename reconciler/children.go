package reconciler

import (
	"cmp"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Children are the observed children of one parent, as [Sync] hands them to
// its sync function: the objects of every declared kind, by kind in the
// order declared, then by namespace and name. The objects are copies the
// sync function may read (changing them changes nothing in the cluster).
// Use Get and List, or range over them.
//
// A child of a kind declared typed (&appsv1.Deployment{}) is read back
// typed, so [Find] and [All] return it typed:
//
//	dep, ok := reconciler.Find[*appsv1.Deployment](observed, app.Name)
//
// A unit test of a sync function builds its Children as a slice:
// reconciler.Children{dep, svc}.
type Children []client.Object

// List returns the observed children of kind's kind, ordered by namespace
// and name, or nil. kind is an example object of the Go type the kind was
// declared with: a typed one (&corev1.Service{}), or an
// *unstructured.Unstructured with its apiVersion and kind set.
func (c Children) List(kind client.Object) []client.Object {
	var out []client.Object
	for _, o := range c {
		if sameKind(kind, o) {
			out = append(out, o)
		}
	}
	return sortByKey(out)
}

// Get returns the observed child of kind's kind (as in List) with this
// name, or nil. For a cluster-scoped parent whose children of one kind live
// in several namespaces, use List.
func (c Children) Get(kind client.Object, name string) client.Object {
	for _, o := range c {
		if o.GetName() == name && sameKind(kind, o) {
			return o
		}
	}
	return nil
}

// sameKind reports whether obj is of example's kind: the same Go type, and
// for unstructured objects the same group and kind.
func sameKind(example, obj client.Object) bool {
	if example == nil || obj == nil || reflect.TypeOf(example) != reflect.TypeOf(obj) {
		return false
	}
	u, ok := example.(runtime.Unstructured)
	if !ok {
		return true
	}
	want := u.GetObjectKind().GroupVersionKind().GroupKind()
	return want.Kind != "" && obj.GetObjectKind().GroupVersionKind().GroupKind() == want
}

func sortByKey(objs []client.Object) []client.Object {
	slices.SortFunc(objs, func(a, b client.Object) int { return compareKey(a, b) })
	return objs
}

func compareKey(a, b client.Object) int {
	return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
}

// All returns the observed children of Go type O (a typed kind, such as
// *appsv1.Deployment), ordered by namespace and name, typed: no type
// assertion in the sync function.
//
//	for _, job := range reconciler.All[*batchv1.Job](observed) { ... }
//
// Children of kinds declared unstructured are all *unstructured.Unstructured:
// for them, use [Children.List] with an example of the kind.
func All[O client.Object](c Children) []O {
	var out []O
	for _, o := range c {
		if t, ok := o.(O); ok {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b O) int { return compareKey(a, b) })
	return out
}

// Find returns the observed child of Go type O with this name, typed, and
// whether there is one:
//
//	job, ok := reconciler.Find[*batchv1.Job](observed, "migrate")
//
// As for [All], kinds declared unstructured are read with [Children.Get].
func Find[O client.Object](c Children, name string) (O, bool) {
	for _, o := range c {
		if t, ok := o.(O); ok && o.GetName() == name {
			return t, true
		}
	}
	var zero O
	return zero, false
}

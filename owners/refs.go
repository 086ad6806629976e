package owners

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
)

// ObjectRef identifies an object: group, kind, namespace (empty for a
// cluster-scoped object) and name. It has no version, as the same object
// served at v1 and v2 is one object, and no UID, so that a child a parent
// wants (not yet created) and the child that exists compare equal. It is
// comparable: use it with == and as a map key.
type ObjectRef struct {
	Group, Kind, Namespace, Name string
}

// RefOf returns obj's ref, its group and kind from scheme (or from obj's
// TypeMeta for unstructured objects). Errors are of Kind Invalid.
func RefOf(obj client.Object, scheme *runtime.Scheme) (ObjectRef, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return ObjectRef{}, koperrors.WrapKind(koperrors.Invalid, err, "object ref", koperrors.ObjectOf(obj))
	}
	return ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}, nil
}

// GroupKind returns the ref's group and kind.
func (r ObjectRef) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: r.Group, Kind: r.Kind}
}

// Key returns the ref's namespace and name, for a client's Get.
func (r ObjectRef) Key() client.ObjectKey {
	return client.ObjectKey{Namespace: r.Namespace, Name: r.Name}
}

// String renders "Deployment.apps shop/web", "ConfigMap shop/web" for the
// core group, and "Namespace shop" for a cluster-scoped object.
func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.GroupKind().String() + " " + r.Name
	}
	return r.GroupKind().String() + " " + r.Namespace + "/" + r.Name
}

// Compare orders refs by group, kind, namespace and name, returning -1, 0
// or +1, for slices.SortFunc.
func (r ObjectRef) Compare(other ObjectRef) int {
	return cmp.Or(
		strings.Compare(r.Group, other.Group),
		strings.Compare(r.Kind, other.Kind),
		strings.Compare(r.Namespace, other.Namespace),
		strings.Compare(r.Name, other.Name),
	)
}

// RefSet is a set of ObjectRefs, a map like apimachinery's sets.Set: range
// over it, len() it, compare it with go-cmp. Reading a nil RefSet is fine;
// make one with [NewRefSet] (or RefSet{}) before adding.
type RefSet map[ObjectRef]struct{}

// NewRefSet returns a set holding refs.
func NewRefSet(refs ...ObjectRef) RefSet {
	s := make(RefSet, len(refs))
	s.Add(refs...)
	return s
}

// Add adds refs to the set.
func (s RefSet) Add(refs ...ObjectRef) {
	for _, r := range refs {
		s[r] = struct{}{}
	}
}

// Delete removes refs from the set.
func (s RefSet) Delete(refs ...ObjectRef) {
	for _, r := range refs {
		delete(s, r)
	}
}

// Has reports whether r is in the set.
func (s RefSet) Has(r ObjectRef) bool {
	_, ok := s[r]
	return ok
}

// Len is the number of refs in the set.
func (s RefSet) Len() int { return len(s) }

// Sorted returns the refs in the order of [ObjectRef.Compare].
func (s RefSet) Sorted() []ObjectRef {
	return slices.SortedFunc(maps.Keys(s), ObjectRef.Compare)
}

// Difference returns a new set of the refs in s that are not in other:
// with s the children that exist and other those wanted, the ones to
// prune.
func (s RefSet) Difference(other RefSet) RefSet {
	out := make(RefSet, len(s))
	for r := range s {
		if !other.Has(r) {
			out[r] = struct{}{}
		}
	}
	return out
}

// Union returns a new set of the refs in s or other.
func (s RefSet) Union(other RefSet) RefSet {
	out := make(RefSet, len(s)+len(other))
	maps.Copy(out, s)
	maps.Copy(out, other)
	return out
}

// String renders the sorted refs: "{ConfigMap shop/a, Deployment.apps shop/b}".
func (s RefSet) String() string {
	parts := make([]string, 0, len(s))
	for _, r := range s.Sorted() {
		parts = append(parts, r.String())
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

package owners

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
)

// ObjectRef identifies an object across versions: group, kind, namespace,
// name. It is comparable and usable as a map key.
type ObjectRef struct {
	Group, Kind, Namespace, Name string
}

// String renders "Deployment.apps ns/name" ("ConfigMap ns/name" for the
// core group, without ns/ for cluster-scoped objects).
func (r ObjectRef) String() string {
	gk := schema.GroupKind{Group: r.Group, Kind: r.Kind}.String()
	if r.Namespace == "" {
		return gk + " " + r.Name
	}
	return gk + " " + r.Namespace + "/" + r.Name
}

// RefOf returns obj's ref, its kind from scheme.
func RefOf(obj client.Object, scheme *runtime.Scheme) (ObjectRef, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return ObjectRef{}, koperrors.WrapKind(koperrors.Invalid, err, "reference", koperrors.ObjectOf(obj))
	}
	return ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}, nil
}

// RefSet is a set of ObjectRefs. The zero value is not usable; make one with
// [NewRefSet].
type RefSet map[ObjectRef]struct{}

// NewRefSet returns a set holding refs.
func NewRefSet(refs ...ObjectRef) RefSet {
	s := make(RefSet, len(refs))
	s.Add(refs...)
	return s
}

// Add adds refs.
func (s RefSet) Add(refs ...ObjectRef) {
	for _, r := range refs {
		s[r] = struct{}{}
	}
}

// Delete removes refs.
func (s RefSet) Delete(refs ...ObjectRef) {
	for _, r := range refs {
		delete(s, r)
	}
}

// Has reports whether r is in the set.
func (s RefSet) Has(r ObjectRef) bool { _, ok := s[r]; return ok }

// Len is the number of refs.
func (s RefSet) Len() int { return len(s) }

// Sorted returns the refs ordered by group, kind, namespace and name.
func (s RefSet) Sorted() []ObjectRef {
	return slices.SortedFunc(maps.Keys(s), func(a, b ObjectRef) int {
		return strings.Compare(a.Group+"\x00"+a.Kind+"\x00"+a.Namespace+"\x00"+a.Name,
			b.Group+"\x00"+b.Kind+"\x00"+b.Namespace+"\x00"+b.Name)
	})
}

// Difference returns the refs in s that are not in other.
func (s RefSet) Difference(other RefSet) RefSet {
	out := RefSet{}
	for r := range s {
		if !other.Has(r) {
			out[r] = struct{}{}
		}
	}
	return out
}

// Union returns the refs in s or other.
func (s RefSet) Union(other RefSet) RefSet {
	out := maps.Clone(s)
	if out == nil {
		out = RefSet{}
	}
	maps.Copy(out, other)
	return out
}

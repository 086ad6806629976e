package meta

import (
	"cmp"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/internal/ownerref"
)

// ObjectRef identifies an object: group, kind, namespace (empty for a
// cluster-scoped object) and name. It is kopgo's one identity type: errors
// name their object with it, gc reports what it deleted with it, and
// inventories of children are sets of it.
//
// It has no version, as the same object served at v1 and v2 is one object,
// and no UID, so that a child a parent wants (not yet created) and the child
// that exists compare equal. It is comparable: use it with == and as a map
// key (apimachinery's sets.Set[ObjectRef] is a set of them).
type ObjectRef struct {
	Group, Kind, Namespace, Name string
}

// RefOf returns obj's ref, its group and kind from obj's TypeMeta. A typed
// object read through a client has an empty TypeMeta; its kind is then its
// Go type's name and its group is empty, which is enough to name it in a
// message. Where the group matters (comparing refs), set the TypeMeta or
// build the ObjectRef from the kind the scheme gives (apiutil.GVKForObject).
// A nil obj gives the zero ObjectRef.
func RefOf(obj client.Object) ObjectRef {
	if ownerref.IsNil(obj) {
		return ObjectRef{}
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		t := reflect.TypeOf(obj)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		gvk.Kind = t.Name()
	}
	return ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// GroupKind returns the ref's group and kind.
func (r ObjectRef) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: r.Group, Kind: r.Kind}
}

// String renders "Deployment shop/web", "Namespace shop" for a
// cluster-scoped object, the kind or the name alone when the other is
// unknown, and "" for the zero ObjectRef. The group is left out, as in
// kubectl's messages; [ObjectRef.GroupKind] has it.
func (r ObjectRef) String() string {
	key := r.Name
	if r.Namespace != "" {
		key = r.Namespace + "/" + r.Name
	}
	switch {
	case r.Kind == "" && key == "":
		return ""
	case r.Kind == "":
		return key
	case key == "":
		return r.Kind
	default:
		return r.Kind + " " + key
	}
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

package reconciler

import (
	"context"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/childindex"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// observe lists the children of each declared kind that carry the parent's
// label and are controlled by it, as Children and by ref.
func (s *Syncer[T]) observe(ctx context.Context, parent T, env *Env, kinds []childKind, labelKey string) (Children, map[kopmeta.ObjectRef]client.Object, error) {
	var ch Children
	byRef := map[kopmeta.ObjectRef]client.Object{}
	for _, k := range kinds {
		list, err := s.listChildren(ctx, parent, env, k, labelKey)
		if err != nil {
			return nil, nil, koperrors.Wrap(err, "list children", kopmeta.ObjectRef{Group: k.gvk.Group, Kind: k.gvk.Kind, Namespace: parent.GetNamespace()})
		}
		objs := []client.Object{}
		err = apimeta.EachListItem(list, func(o runtime.Object) error {
			obj, ok := o.(client.Object)
			if ok && metav1.IsControlledBy(obj, parent) && obj.GetLabels()[labelKey] == parent.GetName() {
				objs = append(objs, obj)
				byRef[refFor(k.gvk, obj.GetNamespace(), obj.GetName())] = obj
			}
			return nil
		})
		if err != nil {
			return nil, nil, koperrors.WrapKind(koperrors.Internal, err, "list children", kopmeta.ObjectRef{Group: k.gvk.Group, Kind: k.gvk.Kind})
		}
		ch = append(ch, sortByKey(objs)...)
	}
	return ch, byRef, nil
}

// listChildren lists the objects of kind k that may be parent's children:
// through the controller index when the cache has it, else by the owner
// label.
func (s *Syncer[T]) listChildren(ctx context.Context, parent T, env *Env, k childKind, labelKey string) (client.ObjectList, error) {
	if uid := parent.GetUID(); uid != "" {
		list := newList(env.Scheme, k)
		// A cache without the index refuses at once, in memory. The index
		// is across namespaces (a UID is unique in the cluster).
		if err := env.Client.List(ctx, list, client.MatchingFields{childindex.Field: string(uid)}); err == nil {
			return list, nil
		}
	}
	var opts []client.ListOption
	if k.namespaced && parent.GetNamespace() != "" {
		opts = append(opts, client.InNamespace(parent.GetNamespace()))
	}
	list := newList(env.Scheme, k)
	return list, env.Client.List(ctx, list, append(opts, client.MatchingLabels{labelKey: parent.GetName()})...)
}

// refFor is the ref of the object of kind gvk named namespace/name.
func refFor(gvk schema.GroupVersionKind, namespace, name string) kopmeta.ObjectRef {
	return kopmeta.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: namespace, Name: name}
}

// newList returns an empty list for kind k: typed when the scheme knows the
// list type and k was declared typed, unstructured otherwise.
func newList(scheme *runtime.Scheme, k childKind) client.ObjectList {
	listGVK := k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List")
	if _, isU := k.example.(runtime.Unstructured); !isU {
		if o, err := scheme.New(listGVK); err == nil {
			if l, ok := o.(client.ObjectList); ok {
				return l
			}
		}
	}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(listGVK)
	return l
}

// newObject returns an empty object of kind k, typed or unstructured as
// [newList] decides.
func newObject(scheme *runtime.Scheme, k childKind) client.Object {
	if _, isU := k.example.(runtime.Unstructured); !isU {
		if o, err := scheme.New(k.gvk); err == nil {
			if obj, ok := o.(client.Object); ok {
				return obj
			}
		}
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.gvk)
	return u
}

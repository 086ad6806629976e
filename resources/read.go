package resources

import (
	"context"
	"sort"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/scope"
)

// Reader reads objects and knows their kinds and scopes: client.Client and a
// manager's cached client satisfy it.
type Reader interface {
	client.Reader
	Scheme() *runtime.Scheme
	RESTMapper() apimeta.RESTMapper
}

// Client reads and writes: client.Client satisfies it.
type Client interface {
	Reader
	client.Writer
}

// Get reads the object called name in scope s into obj. The scope is checked
// against the kind first; a missing object is an error of Kind NotFound.
func Get(ctx context.Context, c Reader, s scope.Scope, name string, obj client.Object) error {
	if err := checkScope(c, s, obj); err != nil {
		return err
	}
	key := client.ObjectKey{Namespace: s.Namespace(), Name: name}
	if err := c.Get(ctx, key, obj); err != nil {
		return koperrors.Wrap(err, "get", objectAt(obj, key))
	}
	return nil
}

// Find is Get that reports a missing object as found=false instead of an
// error.
func Find(ctx context.Context, c Reader, s scope.Scope, name string, obj client.Object) (found bool, err error) {
	err = Get(ctx, c, s, name, obj)
	if koperrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// List lists the objects of list's kind in scope s: one namespace, all
// namespaces, or cluster-scoped. opts take label and field selectors as
// client.MatchingLabels, client.MatchingLabelsSelector, client.MatchingFields.
func List(ctx context.Context, c Reader, s scope.Scope, list client.ObjectList, opts ...client.ListOption) error {
	if err := checkScope(c, s, list); err != nil {
		return err
	}
	if err := c.List(ctx, list, append(s.ListOptions(), opts...)...); err != nil {
		return koperrors.Wrap(err, "list", koperrors.Object{GroupVersionKind: itemGVK(c, list), Namespace: s.Namespace()})
	}
	return nil
}

// Names lists only the names of the objects of kind gvk in scope s, sorted:
// the server sends metadata only (PartialObjectMetadataList), no specs.
func Names(ctx context.Context, c Reader, s scope.Scope, gvk schema.GroupVersionKind, opts ...client.ListOption) ([]types.NamespacedName, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := List(ctx, c, s, list, opts...); err != nil {
		return nil, err
	}
	names := make([]types.NamespacedName, len(list.Items))
	for i, item := range list.Items {
		names[i] = types.NamespacedName{Namespace: item.Namespace, Name: item.Name}
	}
	sort.Slice(names, func(i, j int) bool { return names[i].String() < names[j].String() })
	return names, nil
}

// checkScope checks s against obj's kind (an object or a list).
func checkScope(c Reader, s scope.Scope, obj runtime.Object) error {
	gvk := itemGVK(c, obj)
	if gvk.Kind == "" {
		return koperrors.Errorf(koperrors.Invalid, "cannot tell the kind of %T: register it in the client's scheme", obj)
	}
	return s.Check(c.RESTMapper(), gvk)
}

// itemGVK is obj's kind, or for a list the kind of its items.
func itemGVK(c Reader, obj runtime.Object) schema.GroupVersionKind {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return schema.GroupVersionKind{}
	}
	if apimeta.IsListType(obj) {
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	return gvk
}

func objectAt(obj client.Object, key client.ObjectKey) koperrors.Object {
	o := koperrors.ObjectOf(obj)
	o.Namespace, o.Name = key.Namespace, key.Name
	return o
}

// Package liveread reads one object by name from the API server, for the
// Applier and reconciler.Sync, which must know whether an object exists
// when their cache cannot tell: a get, which the API server answers from
// etcd at once, or, for a kind the operator may list but not get (a 403
// remembered for the Reader's life), a list by name, which the API server
// answers from its watch cache once that has caught up with etcd.
package liveread

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// Reader reads objects by name and remembers the kinds it may not get.
// The zero Reader is ready to use; it is safe for concurrent use.
type Reader struct {
	listOnly sync.Map // schema.GroupVersionKind -> true
}

// Read reads the object key of kind gvk through c; newObject and newList
// return an empty object and list of that kind. It returns nil when there
// is none.
func (l *Reader) Read(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, key client.ObjectKey,
	newObject func() client.Object, newList func() client.ObjectList,
) (client.Object, error) {
	if _, listOnly := l.listOnly.Load(gvk); !listOnly {
		obj := newObject()
		err := c.Get(ctx, key, obj)
		switch {
		case err == nil:
			return obj, nil
		case apierrors.IsNotFound(err):
			return nil, nil
		case !apierrors.IsForbidden(err):
			return nil, err
		}
		log.FromContext(ctx).V(1).Info("May not get objects of this kind; reading them with a list by name", "kind", gvk.String())
		l.listOnly.Store(gvk, true)
	}
	list := newList()
	opts := []client.ListOption{client.MatchingFields{"metadata.name": key.Name}}
	if key.Namespace != "" {
		opts = append(opts, client.InNamespace(key.Namespace))
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	var found client.Object
	err := apimeta.EachListItem(list, func(o runtime.Object) error {
		if obj, ok := o.(client.Object); ok && obj.GetName() == key.Name {
			found = obj
		}
		return nil
	})
	if err != nil {
		return nil, koperrors.WrapKind(koperrors.Internal, err, "list by name", kopmeta.ObjectRef{})
	}
	return found, nil
}

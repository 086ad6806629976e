package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/reconciler"
)

// ownedKinds returns the kinds to watch with Owns: those given to Owns,
// then the reconciler's own child kinds not already among them, so that a
// Sync controller sees its children change without the user repeating
// them.
func (b *Builder[T]) ownedKinds(scheme *runtime.Scheme) ([]client.Object, error) {
	owns := b.owns
	ck, ok := b.r.(reconciler.Owner)
	if !ok {
		return owns, nil
	}
	seen := map[schema.GroupVersionKind]bool{}
	for _, o := range owns {
		gvk, err := apiutil.GVKForObject(o, scheme)
		if err != nil {
			return nil, koperrors.WrapKind(koperrors.Config, err, fmt.Sprintf("controller %q: Owns(%T)", b.name, o), kopmeta.ObjectRef{})
		}
		seen[gvk] = true
	}
	for _, o := range ck.ChildKinds() {
		gvk, err := apiutil.GVKForObject(o, scheme)
		if err != nil {
			return nil, koperrors.WrapKind(koperrors.Config, err, fmt.Sprintf("controller %q: child kind %T", b.name, o), kopmeta.ObjectRef{})
		}
		if !seen[gvk] {
			seen[gvk] = true
			owns = append(owns, o)
		}
	}
	return owns, nil
}

func (b *Builder[T]) watchedKinds() []client.Object {
	objs := make([]client.Object, 0, len(b.watches))
	for _, w := range b.watches {
		objs = append(objs, w.obj)
	}
	return objs
}

// declaredKinds returns the kinds of objs as a set. Metadata-only objects
// (PartialObjectMetadata) are left out: their cache holds no fields to
// compare an apply with.
func declaredKinds(scheme *runtime.Scheme, objs []client.Object) (map[schema.GroupVersionKind]bool, error) {
	kinds := map[schema.GroupVersionKind]bool{}
	for _, o := range objs {
		if _, ok := o.(*metav1.PartialObjectMetadata); ok {
			continue
		}
		gvk, err := apiutil.GVKForObject(o, scheme)
		if err != nil {
			return nil, koperrors.WrapKind(koperrors.Config, err, fmt.Sprintf("watched kind %T", o), kopmeta.ObjectRef{})
		}
		kinds[gvk] = true
	}
	return kinds, nil
}

// groupKinds returns the kinds of objs, each once, in their order.
// Metadata-only objects (PartialObjectMetadata) are left out, as in
// declaredKinds: a typed read of their kind uses another cache.
func groupKinds(scheme *runtime.Scheme, objs []client.Object) ([]schema.GroupKind, error) {
	var gks []schema.GroupKind
	for _, o := range objs {
		if _, ok := o.(*metav1.PartialObjectMetadata); ok {
			continue
		}
		gvk, err := apiutil.GVKForObject(o, scheme)
		if err != nil {
			return nil, koperrors.WrapKind(koperrors.Config, err, fmt.Sprintf("complete kind %T", o), kopmeta.ObjectRef{})
		}
		if !slices.Contains(gks, gvk.GroupKind()) {
			gks = append(gks, gvk.GroupKind())
		}
	}
	return gks, nil
}

// completeKinds returns the kinds whose cache holds all their objects: the
// kinds declared with CompleteCache, and, in a manager Run built (ownManager),
// every kind the controller watches, but its own kind when LabelSelector or
// WatcherConfig filters its cache.
func (b *Builder[T]) completeKinds(scheme *runtime.Scheme, proto T, owns []client.Object, ownManager bool) ([]client.Object, error) {
	if !ownManager {
		return b.complete, nil
	}
	filtered := b.selector != nil || b.watcher != nil
	protoGVK, err := apiutil.GVKForObject(proto, scheme)
	if err != nil {
		return nil, koperrors.WrapKind(koperrors.Config, err, fmt.Sprintf("controller %q: kind %T", b.name, proto), kopmeta.ObjectRef{})
	}
	var objs []client.Object
	for _, o := range slices.Concat(b.complete, []client.Object{proto}, owns, b.watchedKinds()) {
		if gvk, err := apiutil.GVKForObject(o, scheme); filtered && err == nil && gvk.GroupKind() == protoGVK.GroupKind() {
			continue
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// declaredOnly is the Applier's cache: the manager's cache, for the kinds
// the controller watches (its own, Owns, Watch and a Syncer's child
// kinds). Reading any other kind from the manager's cache would silently
// start a cluster-wide informer for it, which holds every such object in
// memory and needs list and watch permission on the kind. For those kinds
// declaredOnly refuses, and the Applier, which treats a cache it cannot
// read as unknown, sends the apply (one request, no informer).
type declaredOnly struct {
	client.Reader
	scheme *runtime.Scheme
	kinds  map[schema.GroupVersionKind]bool
}

// errNotDeclared says a kind is not among those the controller watches.
var errNotDeclared = fmt.Errorf("kind not watched by this controller")

func (d declaredOnly) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	gvk, err := apiutil.GVKForObject(obj, d.scheme)
	if err != nil {
		return err
	}
	if !d.kinds[gvk] {
		return fmt.Errorf("read %s %s from the cache: %w", gvk.Kind, key, errNotDeclared)
	}
	return d.Reader.Get(ctx, key, obj, opts...)
}

func (d declaredOnly) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	gvk, err := apiutil.GVKForObject(list, d.scheme)
	if err != nil {
		return err
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	if !d.kinds[gvk] {
		return fmt.Errorf("list %s from the cache: %w", gvk.Kind, errNotDeclared)
	}
	return d.Reader.List(ctx, list, opts...)
}

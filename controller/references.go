package controller

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// reference is one call of References.
type reference[T client.Object] struct {
	kind  client.Object
	names func(T) []string
}

// References makes the objects of kind that a primary names (a Secret
// with credentials, a ConfigMap, another custom resource) reconcile every
// primary that names them: when one is created, changed or deleted, each
// primary whose names returns its name is reconciled at once. A primary
// that names an object that does not exist yet is reconciled when it is
// created.
//
// names returns the names of the objects of kind that a primary refers to
// (read from its spec; nil or "" for none). They are in the primary's
// namespace; a cluster-scoped primary has none, so its names are of
// cluster-scoped objects, and a namespaced kind for a cluster-scoped
// primary is a mistake (see "Objects a primary references" in the package
// documentation for why). A cluster-scoped kind is named by name from any
// primary.
//
// The Builder indexes the primaries by these names in the manager's cache
// (a field index on T, under Run and Setup alike), and maps an event of
// kind to the primaries through that index, from the cache, without a
// request. The watch of kind is metadata-only: the cache holds names,
// labels and versions of its objects, never their data. The reconciler's
// reads of kind through Env.Client go to the API server, one get each
// (under Run the manager's client does not cache the kind; under Setup
// the Builder's Env routes them to the uncached reader), unless the
// controller also watches kind in full (Owns, Watch, a Syncer's child
// kinds), whose cache then answers.
//
// Calls add up: several kinds, or one kind with several name functions.
// A nil kind or names, a kind the scheme does not know, and T's own kind
// are mistakes, returned by Run or Setup.
func (b *Builder[T]) References(kind client.Object, names func(T) []string) *Builder[T] {
	switch {
	case kind == nil || reflect.ValueOf(kind).Kind() == reflect.Pointer && reflect.ValueOf(kind).IsNil():
		b.errs = append(b.errs, fmt.Errorf("controller %q: References: the kind is nil", b.name))
		return b
	case names == nil:
		b.errs = append(b.errs, fmt.Errorf("controller %q: References(%T): the name function is nil", b.name, kind))
		return b
	}
	b.refs = append(b.refs, reference[T]{kind: kind, names: names})
	return b
}

// refField is the name of the field index of the i-th References call.
// The controller's name makes it unique on a manager, which may run
// several controllers of kind T.
func (b *Builder[T]) refField(i int, gvk schema.GroupVersionKind) string {
	return fmt.Sprintf("kopgo.dev/references.%s.%d.%s", b.name, i, gvk.Kind)
}

// refGVKs checks the References kinds against scheme and T, and returns
// their kinds.
func (b *Builder[T]) refGVKs(scheme *runtime.Scheme, proto T) ([]schema.GroupVersionKind, error) {
	if len(b.refs) == 0 {
		return nil, nil
	}
	own, err := apiutil.GVKForObject(proto, scheme)
	if err != nil {
		return nil, koperrors.WrapKind(koperrors.Config, err, fmt.Sprintf("controller %q: kind %T", b.name, proto), kopmeta.ObjectRef{})
	}
	var errs []error
	gvks := make([]schema.GroupVersionKind, 0, len(b.refs))
	for _, r := range b.refs {
		gvk, err := apiutil.GVKForObject(r.kind, scheme)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("controller %q: References(%T): %w", b.name, r.kind, err))
		case gvk.GroupKind() == own.GroupKind():
			// Its metadata-only watch would be a second cache of the
			// primaries, and reading them live would make the loop's own
			// reads requests.
			errs = append(errs, fmt.Errorf("controller %q: References(%T): the controller's own kind %s; a primary that depends on another of its kind needs a Watch with a mapper", b.name, r.kind, gvk.Kind))
		}
		gvks = append(gvks, gvk)
	}
	if len(errs) > 0 {
		return nil, koperrors.WrapKind(koperrors.Config, errors.Join(errs...), "build controller", kopmeta.ObjectRef{})
	}
	return gvks, nil
}

// liveKinds returns the References kinds that the controller does not
// also watch in full (its kind, Owns, Watch, an Owner's child kinds):
// those whose reads through Env.Client go to the API server.
func (b *Builder[T]) liveKinds(scheme *runtime.Scheme, refGVKs []schema.GroupVersionKind, typed []client.Object) []client.Object {
	var watched []schema.GroupKind
	for _, o := range typed {
		if _, ok := o.(*metav1.PartialObjectMetadata); ok {
			continue
		}
		if gvk, err := apiutil.GVKForObject(o, scheme); err == nil {
			watched = append(watched, gvk.GroupKind())
		}
	}
	var live []client.Object
	var seen []schema.GroupKind
	for i, gvk := range refGVKs {
		if slices.Contains(watched, gvk.GroupKind()) || slices.Contains(seen, gvk.GroupKind()) {
			continue
		}
		seen = append(seen, gvk.GroupKind())
		live = append(live, b.refs[i].kind)
	}
	return live
}

// setupReferences registers the field index of each References call on
// mgr's cache and returns the handler of each one's watch, in order.
func (b *Builder[T]) setupReferences(mgr manager.Manager, proto T, gvks []schema.GroupVersionKind) ([]handler.EventHandler, error) {
	if len(b.refs) == 0 {
		return nil, nil
	}
	scheme := mgr.GetScheme()
	own, err := apiutil.GVKForObject(proto, scheme)
	if err != nil {
		return nil, koperrors.WrapKind(koperrors.Config, err, fmt.Sprintf("controller %q: kind %T", b.name, proto), kopmeta.ObjectRef{})
	}
	listGVK := own.GroupVersion().WithKind(own.Kind + "List")
	if _, err := newList(scheme, listGVK); err != nil {
		return nil, koperrors.WrapKind(koperrors.Config, err, fmt.Sprintf("controller %q: References", b.name), kopmeta.ObjectRef{})
	}
	// A cluster-scoped primary names cluster-scoped objects only. When a
	// scope cannot be told yet (a CRD not installed), the watch reports
	// the kind when it starts.
	if ownNamespaced, err := apiutil.IsObjectNamespaced(proto, scheme, mgr.GetRESTMapper()); err == nil && !ownNamespaced {
		for i, r := range b.refs {
			if ns, err := apiutil.IsObjectNamespaced(r.kind, scheme, mgr.GetRESTMapper()); err == nil && ns {
				return nil, koperrors.Errorf(koperrors.Config,
					"controller %q: References(%T): %s is cluster-scoped and names cluster-scoped objects only, but %s is namespaced; watch it with Watch and a mapper of your own",
					b.name, r.kind, own.Kind, gvks[i].Kind)
			}
		}
	}
	handlers := make([]handler.EventHandler, 0, len(b.refs))
	for i, r := range b.refs {
		field := b.refField(i, gvks[i])
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), proto, field, indexNames(field, r.names)); err != nil {
			return nil, koperrors.WrapKind(koperrors.Config, err, fmt.Sprintf("controller %q: References(%T): index %s", b.name, r.kind, own.Kind), kopmeta.ObjectRef{})
		}
		handlers = append(handlers, handler.EnqueueRequestsFromMapFunc(primariesNaming(mgr.GetCache(), scheme, listGVK, field)))
	}
	return handlers, nil
}

// indexNames is the index function of a References call: the names a
// primary returns, without empty ones. A names function that panics names
// nothing for that object (the informer would otherwise stop the
// process); the panic is logged.
func indexNames[T client.Object](field string, names func(T) []string) client.IndexerFunc {
	return func(o client.Object) (out []string) {
		t, ok := o.(T)
		if !ok {
			return nil
		}
		defer func() {
			if p := recover(); p != nil {
				log.Log.Error(fmt.Errorf("panic: %v", p), "References name function panicked; the object names nothing",
					"index", field, "object", types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})
				out = nil
			}
		}()
		for _, n := range names(t) {
			if n != "" && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		return out
	}
}

// primariesNaming maps an object of a referenced kind to the primaries
// that name it, listed from the cache by the index field: those in the
// object's namespace, or, for a cluster-scoped object, in any.
func primariesNaming(cache client.Reader, scheme *runtime.Scheme, listGVK schema.GroupVersionKind, field string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		list, err := newList(scheme, listGVK)
		if err != nil {
			return nil // checked at setup
		}
		opts := []client.ListOption{client.MatchingFields{field: o.GetName()}, client.UnsafeDisableDeepCopy}
		if ns := o.GetNamespace(); ns != "" {
			opts = append(opts, client.InNamespace(ns))
		}
		if err := cache.List(ctx, list, opts...); err != nil {
			log.FromContext(ctx).Error(err, "Listing the primaries that name an object failed", "index", field,
				"object", types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})
			return nil
		}
		var reqs []reconcile.Request
		_ = apimeta.EachListItem(list, func(item runtime.Object) error {
			if m, ok := item.(metav1.Object); ok {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}})
			}
			return nil
		})
		return reqs
	}
}

func newList(scheme *runtime.Scheme, gvk schema.GroupVersionKind) (client.ObjectList, error) {
	o, err := scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	list, ok := o.(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("%s is not a list", gvk)
	}
	return list, nil
}

// liveReads is the Env's client under Setup when the controller
// references kinds it does not otherwise watch: reads of those kinds go to
// the API server (api), as under Run, where the manager's client is made
// with the kinds' cache disabled. Reading them from the manager's cache
// would start a full informer of the kind: every object's data in memory,
// and list and watch permission on it.
type liveReads struct {
	client.Client
	api   client.Reader
	kinds map[schema.GroupKind]bool
}

func newLiveReads(c client.Client, api client.Reader, scheme *runtime.Scheme, kinds []client.Object) client.Client {
	if len(kinds) == 0 {
		return c
	}
	l := liveReads{Client: c, api: api, kinds: map[schema.GroupKind]bool{}}
	for _, k := range kinds {
		if gvk, err := apiutil.GVKForObject(k, scheme); err == nil {
			l.kinds[gvk.GroupKind()] = true
		}
	}
	return l
}

func (l liveReads) live(obj runtime.Object) bool {
	gvk, err := l.GroupVersionKindFor(obj)
	if err != nil {
		return false
	}
	if apimeta.IsListType(obj) {
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	return l.kinds[gvk.GroupKind()]
}

// Get implements client.Reader.
func (l liveReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if l.live(obj) {
		return l.api.Get(ctx, key, obj, opts...)
	}
	return l.Client.Get(ctx, key, obj, opts...)
}

// List implements client.Reader.
func (l liveReads) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if l.live(list) {
		return l.api.List(ctx, list, opts...)
	}
	return l.Client.List(ctx, list, opts...)
}

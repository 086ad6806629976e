package reconciler

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/util/sets"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/childindex"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/owners"
	"github.com/kopgo/kopgo/scope"
	"github.com/kopgo/kopgo/status"
)

// Sync returns a [Reconciler] that runs the sync function fn declaratively
// for parents of type T, owning children of the kinds in childKinds (one
// example object per kind, such as &appsv1.Deployment{}, or an
// *unstructured.Unstructured with its apiVersion and kind set; an example
// wrapped in [Child] sets the defaults of its kind).
//
// fn computes the children a parent wants from the parent and the children
// it has (Metacontroller's and roperator's sync hook). It does not talk to
// the API server: Sync reads the observed children, applies what it returns
// and deletes what it no longer returns. It may set the parent's status
// (fields and conditions): the loop writes status after Reconcile returns,
// once and only if it changed. Reconciling or Stalled set here stand;
// otherwise Sync summarises the children (see "Sync: readiness" in the
// package documentation). Changes to anything but the
// parent's status are not written. A desired child of a namespaced kind
// without a namespace is put in the parent's namespace; its owner reference
// and owner label are set by Sync. An error stops the sync: nothing is
// applied or pruned. The [Action] fn returns says when to look again
// (Metacontroller's resyncAfterSeconds), with or without an error.
//
// Each Reconcile:
//
//  1. lists the observed children: the objects of each declared kind, in the
//     parent's namespace, carrying the parent's owner label and controlled by
//     the parent (controller reference with its UID), read through
//     Env.Client, so from the manager's cache;
//  2. calls fn;
//  3. checks every desired child (a declared kind, a name, the parent's
//     namespace, no duplicates, dependencies among the desired children and
//     without cycles) before writing anything: a mistake is a Terminal error
//     of Kind Config or Invalid naming the child;
//  4. sets a controller reference to the parent and the owner label on a copy
//     of each desired child and, in dependency order, applies it with
//     Env.Applier (server-side apply as its field owner, forced: see
//     "Drift"; an unchanged child costs no request), following its
//     [UpdateStrategy] and leaving alone objects it did not create (see
//     below);
//  5. when every desired child is in place, deletes the observed children
//     (labelled and controlled by this parent, nothing else) that are no
//     longer desired, with gc.Delete;
//  6. records at most one Event on the parent, naming the children it
//     created, adopted, updated, recreated and deleted, and, unless fn set
//     the parent's conditions itself, summarises the children's readiness
//     into them (see "Readiness").
//
// The controller Builder watches the child kinds ([Syncer.ChildKinds], the
// [Owner] hook) so that a change to a child reconciles its parent; Sync
// relies on it to notice a child becoming ready. The package documentation
// says what Sync does with objects it did not create, drift, update
// strategies, dependencies, readiness, events, scope, the owner label, its
// cost and its design, under headings "Sync: ...".
func Sync[T client.Object](childKinds []client.Object, fn SyncFunc[T], opts ...SyncOption) *Syncer[T] {
	s := &Syncer[T]{fn: fn}
	for _, k := range childKinds {
		obj, o := unwrapChild(k)
		s.kinds = append(s.kinds, obj)
		s.kindOpts = append(s.kindOpts, o)
	}
	for _, o := range opts {
		o(&s.opts)
	}
	return s
}

// SyncFunc computes the children a parent wants from the parent and the
// children it has, and when to look again ([Done], or [RequeueAfter] for
// Metacontroller's resyncAfterSeconds). A failure stops the sync: nothing
// is applied or pruned, and the action still holds (a delay for the retry).
type SyncFunc[T client.Object] func(ctx context.Context, parent T, observed Children) (desired []client.Object, action Action, err error)

// Syncer is the [Reconciler] that [Sync] returns. It implements [Owner]
// with its child kinds. To clean up on deletion, embed it in a type of
// your own that implements [Finalizer] (see [Syncer.Observe]).
type Syncer[T client.Object] struct {
	kinds    []client.Object
	kindOpts []ChildOptions
	fn       SyncFunc[T]
	opts     syncOptions

	// resolved caches the declared kinds as resolved for one Env (their
	// GVKs and scopes: a RESTMapper lookup each), so that a reconcile does
	// not look them up again. Dropped when a list of children fails, which
	// a kind that is no longer served (its CRD deleted) makes it do.
	resolved atomic.Pointer[resolvedKinds]

	// listOnly holds the child kinds (schema.GroupVersionKind) the operator
	// may not get: a live read of one lists by name instead (readLive).
	listOnly sync.Map
}

// resolvedKinds are a Syncer's declared kinds resolved for env.
type resolvedKinds struct {
	env   *Env
	kinds []childKind
}

// SyncOption configures [Sync].
type SyncOption func(*syncOptions)

// syncOptions are Sync's settings.
type syncOptions struct {
	OwnerLabel string
	Apply      []client.ApplyOption
	Prune      []client.DeleteOption
}

// WithOwnerLabel sets the key of the label naming the parent on every
// child. Default: see "Owner label" in [Sync].
func WithOwnerLabel(key string) SyncOption { return func(o *syncOptions) { o.OwnerLabel = key } }

// WithApplyOptions adds options to every child's apply (controller-runtime's
// client.ApplyOption: client.FieldOwner, client.DryRunAll, ...), after
// apply.Force(true): apply.Force(false) shares fields with other field
// managers instead of taking them back (see "Drift" in [Sync]).
func WithApplyOptions(opts ...client.ApplyOption) SyncOption {
	return func(o *syncOptions) { o.Apply = append(o.Apply, opts...) }
}

// WithPruneOptions adds options to the deletion of children no longer
// desired and of children being recreated, such as
// client.PropagationPolicy(metav1.DeletePropagationForeground).
func WithPruneOptions(opts ...client.DeleteOption) SyncOption {
	return func(o *syncOptions) { o.Prune = append(o.Prune, opts...) }
}

// childKind is one declared child kind, resolved against the scheme and the
// REST mapper.
type childKind struct {
	gvk        schema.GroupVersionKind
	example    client.Object
	namespaced bool
	defaults   ChildOptions
}

// Reconcile implements [Reconciler]: it lists, syncs, applies and prunes as
// [Sync] describes.
func (s *Syncer[T]) Reconcile(ctx context.Context, parent T, env *Env) (Action, error) {
	po := kopmeta.RefOf(parent)
	fail := func(err error) error { return koperrors.Wrap(err, "sync", po) }
	kinds, labelKey, observed, byRef, err := s.observeAll(ctx, parent, env)
	if err != nil {
		return Done(), fail(err)
	}
	setter, hasStatus := any(parent).(status.Setter)
	desired, action, err := s.fn(ctx, parent, observed)
	if err != nil {
		// The user's error as is: its message lands in the parent's own
		// status, where "sync <parent>:" would only repeat the object.
		return action, err
	}
	children, err := s.prepare(parent, env.Scheme, kinds, labelKey, desired)
	if err != nil {
		return action, fail(err)
	}

	r := newSyncRun(s, parent, env, labelKey, byRef)
	for _, c := range children {
		r.sync(ctx, c)
	}
	if len(r.errs) == 0 && len(r.refusals) == 0 && len(r.waits) == 0 {
		// Keep the children that are going away until their replacements
		// are in place: a rename that fails to apply must not leave nothing.
		r.prune(ctx, children)
	}
	r.recordEvent()
	if hasStatus && !reportedProgress(setter) {
		r.summarise(setter)
	}
	if r.requeue > 0 {
		if after, requeue := action.When(); !requeue || (after > 0 && r.requeue < after) {
			action = RequeueAfter(r.requeue)
		}
	}
	if errs := append(r.errs, r.refusals...); len(errs) > 0 {
		return action, fail(errors.Join(errs...))
	}
	return action, nil
}

// Observe returns parent's observed children: the objects of the declared
// kinds that carry its owner label and are controlled by it, from the
// manager's cache, as the sync function receives them. A Cleanup defined
// on a type that embeds the Syncer calls it to see what it cleans up (see
// [Finalizer]).
func (s *Syncer[T]) Observe(ctx context.Context, parent T, env *Env) (Children, error) {
	_, _, observed, _, err := s.observeAll(ctx, parent, env)
	if err != nil {
		return nil, koperrors.Wrap(err, "observe children of", kopmeta.RefOf(parent))
	}
	return observed, nil
}

// observeAll resolves the kinds and the label, and lists the children.
func (s *Syncer[T]) observeAll(ctx context.Context, parent T, env *Env) ([]childKind, string, Children, map[kopmeta.ObjectRef]client.Object, error) {
	kinds, labelKey, err := s.setup(parent, env)
	if err != nil {
		return nil, "", nil, nil, err
	}
	observed, byRef, err := s.observe(ctx, parent, env, kinds, labelKey)
	if err != nil {
		s.resolved.Store(nil) // look the kinds up again next time
		return nil, "", nil, nil, err
	}
	return kinds, labelKey, observed, byRef, nil
}

// reportedProgress reports whether the sync function set Reconciling or
// Stalled on the parent (the loop removes both before each reconcile): its
// report then stands instead of Sync's summary.
func reportedProgress(parent status.Setter) bool {
	return status.Get(parent, status.Reconciling) != nil || status.Get(parent, status.Stalled) != nil
}

// setup resolves the declared kinds and the owner label key, refusing what
// cannot work.
func (s *Syncer[T]) setup(parent T, env *Env) ([]childKind, string, error) {
	if s.fn == nil {
		return nil, "", koperrors.Terminal(koperrors.Errorf(koperrors.Config, "sync function is nil"))
	}
	if env == nil || env.Client == nil || env.Scheme == nil || env.Applier == nil {
		return nil, "", koperrors.Terminal(koperrors.Errorf(koperrors.Config,
			"env needs a client, a scheme and an applier"))
	}
	if parent.GetUID() == "" {
		return nil, "", koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "parent has no UID: it must be read from the API server"))
	}
	kinds, err := s.resolveKinds(parent, env)
	if err != nil {
		return nil, "", err
	}
	labelKey, err := s.ownerLabel(parent, env.Scheme)
	if err != nil {
		return nil, "", err
	}
	if _, err := owners.OwnerLabel(labelKey, parent); err != nil {
		return nil, "", koperrors.Terminal(err)
	}
	return kinds, labelKey, nil
}

// ChildKinds returns the declared child kinds, one example object each (as
// given to [Sync], without [Child]'s wrapper): the controller Builder
// watches them (Owns) so that a change to a child reconciles its parent.
// The slice is a copy.
func (s *Syncer[T]) ChildKinds() []client.Object { return slices.Clone(s.kinds) }

// resolveKinds maps the declared child kinds to GVKs and scopes, refusing
// what a parent of this scope cannot own. The kinds are looked up once per
// Env (see the Syncer's resolved field); the slice returned is shared,
// read only.
func (s *Syncer[T]) resolveKinds(parent T, env *Env) ([]childKind, error) {
	var kinds []childKind
	if c := s.resolved.Load(); c != nil && c.env == env {
		kinds = c.kinds
	} else {
		var err error
		if kinds, err = s.lookUpKinds(env); err != nil {
			return nil, err
		}
		s.resolved.Store(&resolvedKinds{env: env, kinds: kinds})
	}
	if parent.GetNamespace() != "" {
		for _, k := range kinds {
			if !k.namespaced {
				return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config,
					"child kind %s is cluster-scoped: a namespaced parent cannot own it (the garbage collector never resolves such a reference)", k.gvk.GroupKind()))
			}
		}
	}
	return kinds, nil
}

// lookUpKinds resolves the declared kinds against env's scheme and REST
// mapper.
func (s *Syncer[T]) lookUpKinds(env *Env) ([]childKind, error) {
	if len(s.kinds) == 0 {
		return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "no child kinds declared"))
	}
	kinds := make([]childKind, 0, len(s.kinds))
	seen := map[schema.GroupKind]bool{}
	for i, ex := range s.kinds {
		if ex == nil {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "a declared child kind is nil"))
		}
		defaults := s.kindOpts[i]
		gvk, err := apiutil.GVKForObject(ex, env.Scheme)
		if err != nil || gvk.Kind == "" {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "child kind %T: not in the scheme (or, unstructured, without apiVersion and kind): %v", ex, err))
		}
		if seen[gvk.GroupKind()] {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "child kind %s declared twice", gvk.GroupKind()))
		}
		seen[gvk.GroupKind()] = true
		if len(defaults.DependsOn) > 0 {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config,
				"child kind %s: DependsOn names children, not kinds: wrap the desired child with it", gvk.GroupKind()))
		}
		namespaced, err := env.Client.IsObjectNamespaced(ex)
		if err != nil {
			// An unknown kind is Invalid (not served); a discovery failure
			// keeps its own kind and is retried.
			return nil, koperrors.Wrap(err, "resolve child kind", kopmeta.ObjectRef{Group: gvk.Group, Kind: gvk.Kind})
		}
		kinds = append(kinds, childKind{gvk: gvk, example: ex, namespaced: namespaced, defaults: defaults})
	}
	return kinds, nil
}

// ownerLabel returns the owner label key: the option, or one derived from
// the parent's group and kind.
func (s *Syncer[T]) ownerLabel(parent T, scheme *runtime.Scheme) (string, error) {
	if s.opts.OwnerLabel != "" {
		return s.opts.OwnerLabel, nil
	}
	gvk, err := apiutil.GVKForObject(parent, scheme)
	if err != nil {
		return "", koperrors.Terminal(koperrors.WrapKind(koperrors.Config, err, "parent kind", kopmeta.ObjectRef{}))
	}
	group := gvk.Group
	if group == "" {
		group = "sync.kopgo.dev"
	}
	return group + "/" + strings.ToLower(gvk.Kind), nil
}

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
	var ns []client.ListOption
	if k.namespaced && parent.GetNamespace() != "" {
		ns = append(ns, client.InNamespace(parent.GetNamespace()))
	}
	if uid := parent.GetUID(); uid != "" {
		list := newList(env.Scheme, k)
		// A cache without the index refuses at once, in memory.
		if err := env.Client.List(ctx, list, append(ns, client.MatchingFields{childindex.Field: string(uid)})...); err == nil {
			return list, nil
		}
	}
	list := newList(env.Scheme, k)
	return list, env.Client.List(ctx, list, append(ns, client.MatchingLabels{labelKey: parent.GetName()})...)
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

// preparedChild is a desired child ready to apply.
type preparedChild struct {
	obj  client.Object
	ref  kopmeta.ObjectRef
	kind childKind
	opts ChildOptions
	deps []kopmeta.ObjectRef
}

// prepare checks the desired children and returns copies carrying the
// controller reference and the owner label, in dependency order. Nothing is
// applied unless every child passes.
func (s *Syncer[T]) prepare(parent T, scheme *runtime.Scheme, kinds []childKind, labelKey string, desired []client.Object) ([]preparedChild, error) {
	byGK := make(map[schema.GroupKind]childKind, len(kinds))
	declared := make([]string, 0, len(kinds))
	for _, k := range kinds {
		byGK[k.gvk.GroupKind()] = k
		declared = append(declared, k.gvk.GroupKind().String())
	}
	seen := sets.New[kopmeta.ObjectRef]()
	out := make([]preparedChild, 0, len(desired))
	for i, d := range desired {
		d, opts := unwrapChild(d)
		if d == nil {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired child %d is nil", i))
		}
		child := d.DeepCopyObject().(client.Object)
		gvk, err := apiutil.GVKForObject(child, scheme)
		if err != nil || gvk.Kind == "" {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired child %d (%T %s): kind not in the scheme: %v", i, d, d.GetName(), err))
		}
		name := kopmeta.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: child.GetNamespace(), Name: child.GetName()}
		k, ok := byGK[gvk.GroupKind()]
		if !ok {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config,
				"desired child %s: kind %s is not among the declared child kinds (%s); add it to Sync's childKinds",
				name, gvk.GroupKind(), strings.Join(declared, ", ")))
		}
		if child.GetName() == "" {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "desired child %d of kind %s has no name", i, gvk.Kind))
		}
		if err := checkNamespace(parent, child, k, name); err != nil {
			return nil, err
		}
		name.Namespace = child.GetNamespace()
		ref := refFor(gvk, child.GetNamespace(), child.GetName())
		if seen.Has(ref) {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired child %s is returned twice", name))
		}
		seen.Insert(ref)
		if err := owners.SetOwnerLabel(child, labelKey, parent); err != nil {
			return nil, koperrors.Terminal(err)
		}
		if err := owners.SetController(parent, child, scheme); err != nil {
			return nil, koperrors.Terminal(err)
		}
		out = append(out, preparedChild{obj: child, ref: ref, kind: k, opts: opts.over(k.defaults)})
	}
	if err := resolveDependencies(parent, scheme, byGK, out); err != nil {
		return nil, err
	}
	return dependencyOrder(out)
}

// resolveDependencies turns each child's DependsOn objects into refs of
// other desired children.
func resolveDependencies(parent client.Object, scheme *runtime.Scheme, byGK map[schema.GroupKind]childKind, children []preparedChild) error {
	want := sets.New[kopmeta.ObjectRef]()
	for _, c := range children {
		want.Insert(c.ref)
	}
	for i := range children {
		c := &children[i]
		for _, d := range c.opts.DependsOn {
			d, _ := unwrapChild(d)
			if d == nil {
				return koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired child %s depends on nil", c.ref))
			}
			gvk, err := apiutil.GVKForObject(d, scheme)
			if err != nil || gvk.Kind == "" {
				return koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired child %s depends on a %T: kind not in the scheme: %v", c.ref, d, err))
			}
			ns := d.GetNamespace()
			if k, ok := byGK[gvk.GroupKind()]; ok && k.namespaced && ns == "" {
				ns = parent.GetNamespace()
			}
			dep := refFor(gvk, ns, d.GetName())
			switch {
			case dep == c.ref:
				return koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired child %s depends on itself", c.ref))
			case !want.Has(dep):
				return koperrors.Terminal(koperrors.Errorf(koperrors.Config,
					"desired child %s depends on %s, which is not a desired child: DependsOn names children the sync function returns", c.ref, dep))
			}
			if !slices.Contains(c.deps, dep) {
				c.deps = append(c.deps, dep)
			}
		}
	}
	return nil
}

// dependencyOrder orders children so that each comes after the children it
// depends on, keeping the sync function's order otherwise; a cycle is a
// Terminal Config error naming it.
func dependencyOrder(children []preparedChild) ([]preparedChild, error) {
	const (
		unvisited = iota
		visiting
		done
	)
	state := make(map[kopmeta.ObjectRef]int, len(children))
	index := make(map[kopmeta.ObjectRef]int, len(children))
	for i, c := range children {
		index[c.ref] = i
	}
	out := make([]preparedChild, 0, len(children))
	var path []kopmeta.ObjectRef
	var visit func(i int) error
	visit = func(i int) error {
		c := children[i]
		switch state[c.ref] {
		case done:
			return nil
		case visiting:
			at := slices.Index(path, c.ref)
			cycle := make([]string, 0, len(path)-at+1)
			for _, r := range append(path[at:], c.ref) {
				cycle = append(cycle, r.String())
			}
			return koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired children depend on each other in a cycle: %s", strings.Join(cycle, " -> ")))
		}
		state[c.ref] = visiting
		path = append(path, c.ref)
		for _, d := range c.deps {
			if err := visit(index[d]); err != nil {
				return err
			}
		}
		path = path[:len(path)-1]
		state[c.ref] = done
		out = append(out, c)
		return nil
	}
	for i := range children {
		if err := visit(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkNamespace defaults and checks a desired child's namespace against its
// kind's scope and its parent's namespace, with scope's rules.
func checkNamespace(parent, child client.Object, k childKind, name kopmeta.ObjectRef) error {
	s := scope.Cluster
	if k.namespaced {
		// The parent's namespace; the child's own under a cluster-scoped parent.
		s = scope.AllNamespaces
		if ns := cmp.Or(parent.GetNamespace(), child.GetNamespace()); ns != "" {
			s = scope.Namespaced(ns)
		}
	}
	if err := s.ApplyTo(child); err != nil {
		return koperrors.Terminal(koperrors.Wrap(err, "desired child", name))
	}
	return nil
}

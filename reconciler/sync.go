package reconciler

import (
	"context"
	"slices"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/gc"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/owners"
)

// SyncFunc computes the children a parent wants from the parent and the
// children it has (Metacontroller's and roperator's sync hook). It does not
// talk to the API server: [Sync] reads the observed children, applies what
// it returns and deletes what it no longer returns.
//
// It may set the parent's status (fields and conditions): the [Adapter]
// writes status after Reconcile returns, once and only if it changed.
// Conditions set here stand (Reconciling while a child rolls out, a True
// Ready with its own reason); without them a successful sync is Ready=True.
// Changes to anything but the parent's status are not written.
//
// A desired child of a namespaced kind without a namespace is put in the
// parent's namespace. Its owner reference and owner label are set by Sync.
//
// An error stops the sync: nothing is applied or pruned. The one exception
// is a plain request to come back later, koperrors.RequeueAfter(nil, d)
// (Metacontroller's resyncAfterSeconds): the desired children are synced
// and the parent is reconciled again after d.
type SyncFunc[T client.Object] func(ctx context.Context, parent T, observed Children) (desired []client.Object, err error)

// Sync returns a [Reconciler] that runs fn declaratively for parents of type
// T, owning children of the kinds in childKinds (one example object per
// kind, such as &appsv1.Deployment{}, or an *unstructured.Unstructured with
// its apiVersion and kind set). Each Reconcile:
//
//  1. lists the observed children: the objects of each declared kind, in the
//     parent's namespace, carrying the parent's owner label and controlled by
//     the parent (controller reference with its UID), read through
//     Env.Client, so from the manager's cache;
//  2. calls fn;
//  3. checks every desired child (a declared kind, a name, the parent's
//     namespace, no duplicates) before writing anything: a mistake is a
//     Terminal error of Kind Config or Invalid naming the child;
//  4. sets a controller reference to the parent and the owner label on a copy
//     of each desired child and applies it with Env.Applier (server-side
//     apply as Env.FieldOwner; an unchanged child costs no request);
//  5. when every apply succeeded, deletes the observed children (labelled
//     and controlled by this parent, nothing else) that are no longer
//     desired, with gc.Delete.
//
// Watch the child kinds with the controller Builder's Owns so that a change
// to a child reconciles its parent.
//
// # Scope
//
// A namespaced parent owns namespaced children in its own namespace (owner
// references do not cross namespaces); declaring a cluster-scoped child kind
// for it is a Config error. A cluster-scoped parent may own cluster-scoped
// children and namespaced children in any namespace (they must name it);
// their observed children are listed in all namespaces.
//
// # Owner label
//
// The label is "<parent group>/<parent kind, lower case>" with the parent's
// name as value ("echoserver.examples.kopgo.dev/echoserver: web"), or
// "sync.kopgo.dev/<kind>" for a parent of the core group; WithOwnerLabel sets
// another key. It lets owners.LabelMapper and `kubectl get -l` find a
// parent's children; which children are the parent's is decided by the
// controller reference's UID, so a child of another parent with the same
// label value (a parent deleted and created again, or one of another kind)
// is never listed as observed nor pruned. The parent's name must be a valid
// label value (at most 63 characters).
//
// # Cost
//
// With a manager's cached client and typed child kinds, a sync whose
// desired children are unchanged sends no request at all: lists come from
// the cache, the Applier skips children nobody changed since its last apply,
// pruning is only attempted when an observed child is no longer desired, and
// the Adapter writes status only when it changed (measured in the tests).
// Pruning deletes the observed children it already holds (gc.Delete): no
// second list, no second informer. Unstructured child kinds are read live
// unless the manager's client caches unstructured objects.
//
// # Design
//
// The sync function gets no Env: like roperator's and Metacontroller's hooks
// it is a pure function of the parent and its children, so it is unit-tested
// without a cluster ([NewChildren]); a sync that must read something else
// can wrap the Syncer in a [Func]. Children come back typed through the
// scheme ([ChildOf], [ChildrenOf]) rather than as JSON, since Go operators
// hold typed objects. Mistakes in the desired set are Terminal: the same
// code computes the same set again, so retrying only repeats the error,
// while Stalled=True shows it on the parent. Pruning waits for every apply
// to succeed, so a child renamed to a name that fails to apply does not
// leave the parent with neither. Sync returns the concrete *Syncer (kopgo
// returns concrete types); it never panics: its own mistakes (no kinds, a
// nil function) are Terminal Config errors of every Reconcile.
func Sync[T client.Object](childKinds []client.Object, fn SyncFunc[T], opts ...SyncOption) *Syncer[T] {
	s := &Syncer[T]{kinds: slices.Clone(childKinds), fn: fn}
	for _, o := range opts {
		o(&s.opts)
	}
	return s
}

// Syncer is the [Reconciler] that [Sync] returns.
type Syncer[T client.Object] struct {
	kinds []client.Object
	fn    SyncFunc[T]
	opts  SyncOptions
}

// SyncOptions configure [Sync]. Every field has a working default.
type SyncOptions struct {
	// OwnerLabel is the key of the label naming the parent on every child.
	// Default: see "Owner label" in [Sync].
	OwnerLabel string
	// Apply are the options of every child's apply, such as apply.Force(true)
	// to take over fields another field manager owns.
	Apply []apply.ApplyOption
	// Prune are the options of the deletion of children no longer desired,
	// such as gc.Propagation(metav1.DeletePropagationForeground).
	Prune []gc.Option
}

// SyncOption configures [Sync].
type SyncOption func(*SyncOptions)

// WithOwnerLabel sets [SyncOptions.OwnerLabel].
func WithOwnerLabel(key string) SyncOption { return func(o *SyncOptions) { o.OwnerLabel = key } }

// WithApplyOptions adds to [SyncOptions.Apply].
func WithApplyOptions(opts ...apply.ApplyOption) SyncOption {
	return func(o *SyncOptions) { o.Apply = append(o.Apply, opts...) }
}

// WithPruneOptions adds to [SyncOptions.Prune].
func WithPruneOptions(opts ...gc.Option) SyncOption {
	return func(o *SyncOptions) { o.Prune = append(o.Prune, opts...) }
}

// childKind is one declared child kind, resolved against the scheme and the
// REST mapper.
type childKind struct {
	gvk        schema.GroupVersionKind
	example    client.Object
	namespaced bool
}

// Reconcile implements [Reconciler]: it lists, syncs, applies and prunes as
// [Sync] describes.
func (s *Syncer[T]) Reconcile(ctx context.Context, parent T, env *Env) error {
	po := koperrors.ObjectOf(parent)
	fail := func(err error) error { return koperrors.Wrap(err, "sync", po) }
	if s.fn == nil {
		return fail(koperrors.Terminal(koperrors.Errorf(koperrors.Config, "sync function is nil")))
	}
	if env == nil || env.Client == nil || env.Scheme == nil || env.Applier == nil {
		return fail(koperrors.Terminal(koperrors.Errorf(koperrors.Config,
			"env needs a client, a scheme and an applier (build it with EnvFromManager)")))
	}
	if parent.GetUID() == "" {
		return fail(koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "parent has no UID: it must be read from the API server")))
	}
	kinds, err := s.resolveKinds(parent, env)
	if err != nil {
		return fail(err)
	}
	labelKey, err := s.ownerLabel(parent, env.Scheme)
	if err != nil {
		return fail(err)
	}
	if _, err := owners.OwnerLabel(labelKey, parent); err != nil {
		return fail(koperrors.Terminal(err))
	}

	observed, err := s.observe(ctx, parent, env, kinds, labelKey)
	if err != nil {
		return fail(err)
	}
	desired, err := s.fn(ctx, parent, observed)
	requeue := err
	if err != nil && !koperrors.IsRequeueOnly(err) {
		// The user's error as is: its message lands in the parent's own
		// status, where "sync <parent>:" would only repeat the object.
		return err
	}
	children, err := s.prepare(parent, env.Scheme, kinds, labelKey, desired)
	if err != nil {
		return fail(err)
	}

	logger := log.FromContext(ctx)
	var errs []error
	for _, c := range children {
		res, err := env.Applier.Apply(ctx, c.obj, s.opts.Apply...)
		if err != nil {
			errs = append(errs, err) // names the child already
			continue
		}
		switch res.Outcome {
		case apply.Created:
			logger.V(1).Info("Created child", "child", c.ref.String())
			recordNormal(env, parent, res.Object(), "Created", "created "+c.ref.String())
		case apply.Updated:
			logger.V(1).Info("Updated child", "child", c.ref.String())
		}
	}
	if len(errs) > 0 {
		// Keep the children that are going away until their replacements
		// are in place: a rename that fails to apply must not leave nothing.
		return fail(koperrors.Join(errs...))
	}
	if err := s.prune(ctx, parent, env, observed, children); err != nil {
		return fail(err)
	}
	return requeue
}

// resolveKinds maps the declared child kinds to GVKs and scopes, refusing
// what a parent of this scope cannot own.
func (s *Syncer[T]) resolveKinds(parent T, env *Env) ([]childKind, error) {
	if len(s.kinds) == 0 {
		return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "no child kinds declared"))
	}
	kinds := make([]childKind, 0, len(s.kinds))
	seen := map[schema.GroupKind]bool{}
	for _, ex := range s.kinds {
		if ex == nil {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "a declared child kind is nil"))
		}
		gvk, err := apiutil.GVKForObject(ex, env.Scheme)
		if err != nil || gvk.Kind == "" {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "child kind %T: not in the scheme (or, unstructured, without apiVersion and kind): %v", ex, err))
		}
		if seen[gvk.GroupKind()] {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "child kind %s declared twice", gvk.GroupKind()))
		}
		seen[gvk.GroupKind()] = true
		namespaced, err := env.Client.IsObjectNamespaced(ex)
		if err != nil {
			// An unknown kind is Invalid (not served); a discovery failure
			// keeps its own kind and is retried.
			return nil, koperrors.Wrap(err, "resolve child kind", koperrors.Object{GroupVersionKind: gvk})
		}
		if !namespaced && parent.GetNamespace() != "" {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config,
				"child kind %s is cluster-scoped: a namespaced parent cannot own it (the garbage collector never resolves such a reference)", gvk.GroupKind()))
		}
		kinds = append(kinds, childKind{gvk: gvk, example: ex, namespaced: namespaced})
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
		return "", koperrors.Terminal(koperrors.WrapKind(koperrors.Config, err, "parent kind", koperrors.Object{}))
	}
	group := gvk.Group
	if group == "" {
		group = "sync.kopgo.dev"
	}
	return group + "/" + strings.ToLower(gvk.Kind), nil
}

// observe lists the children of each declared kind that carry the parent's
// label and are controlled by it.
func (s *Syncer[T]) observe(ctx context.Context, parent T, env *Env, kinds []childKind, labelKey string) (Children, error) {
	ch := Children{scheme: env.Scheme, byKind: make(map[schema.GroupKind][]client.Object, len(kinds))}
	for _, k := range kinds {
		list, err := newList(env.Scheme, k)
		if err != nil {
			return Children{}, err
		}
		opts := []client.ListOption{client.MatchingLabels{labelKey: parent.GetName()}}
		if k.namespaced && parent.GetNamespace() != "" {
			opts = append(opts, client.InNamespace(parent.GetNamespace()))
		}
		if err := env.Client.List(ctx, list, opts...); err != nil {
			return Children{}, koperrors.Wrap(err, "list children", koperrors.Object{GroupVersionKind: k.gvk, Namespace: parent.GetNamespace()})
		}
		objs := []client.Object{}
		err = apimeta.EachListItem(list, func(o runtime.Object) error {
			obj, ok := o.(client.Object)
			if ok && metav1.IsControlledBy(obj, parent) {
				objs = append(objs, obj)
			}
			return nil
		})
		if err != nil {
			return Children{}, koperrors.WrapKind(koperrors.Internal, err, "list children", koperrors.Object{GroupVersionKind: k.gvk})
		}
		ch.byKind[k.gvk.GroupKind()] = sortByKey(objs)
	}
	return ch, nil
}

// newList returns an empty list for kind k: typed when the scheme knows the
// list type and k was declared typed, unstructured otherwise.
func newList(scheme *runtime.Scheme, k childKind) (client.ObjectList, error) {
	listGVK := k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List")
	if _, isU := k.example.(runtime.Unstructured); !isU {
		if o, err := scheme.New(listGVK); err == nil {
			if l, ok := o.(client.ObjectList); ok {
				return l, nil
			}
		}
	}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(listGVK)
	return l, nil
}

// preparedChild is a desired child ready to apply.
type preparedChild struct {
	obj client.Object
	ref owners.ObjectRef
}

// prepare checks the desired children and returns copies carrying the
// controller reference and the owner label. Nothing is applied unless every
// child passes.
func (s *Syncer[T]) prepare(parent T, scheme *runtime.Scheme, kinds []childKind, labelKey string, desired []client.Object) ([]preparedChild, error) {
	byGK := make(map[schema.GroupKind]childKind, len(kinds))
	declared := make([]string, 0, len(kinds))
	for _, k := range kinds {
		byGK[k.gvk.GroupKind()] = k
		declared = append(declared, k.gvk.GroupKind().String())
	}
	seen := owners.RefSet{}
	out := make([]preparedChild, 0, len(desired))
	for i, d := range desired {
		if d == nil {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired child %d is nil", i))
		}
		child := d.DeepCopyObject().(client.Object)
		gvk, err := apiutil.GVKForObject(child, scheme)
		if err != nil || gvk.Kind == "" {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired child %d (%T %s): kind not in the scheme: %v", i, d, d.GetName(), err))
		}
		name := koperrors.Object{GroupVersionKind: gvk, Namespace: child.GetNamespace(), Name: child.GetName()}
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
		ref := owners.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: child.GetNamespace(), Name: child.GetName()}
		if seen.Has(ref) {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired child %s is returned twice", name))
		}
		seen.Add(ref)
		if err := owners.SetOwnerLabel(child, labelKey, parent); err != nil {
			return nil, koperrors.Terminal(err)
		}
		if err := owners.SetController(parent, child, scheme); err != nil {
			return nil, koperrors.Terminal(err)
		}
		out = append(out, preparedChild{obj: child, ref: ref})
	}
	return out, nil
}

// checkNamespace defaults and checks a desired child's namespace against its
// kind's scope and its parent's namespace.
func checkNamespace(parent, child client.Object, k childKind, name koperrors.Object) error {
	pns, cns := parent.GetNamespace(), child.GetNamespace()
	switch {
	case !k.namespaced && cns != "":
		return koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "desired child %s: kind %s is cluster-scoped and has no namespace", name, k.gvk.Kind))
	case !k.namespaced:
		return nil
	case pns == "" && cns == "":
		return koperrors.Terminal(koperrors.Errorf(koperrors.Invalid,
			"desired child %s: a namespaced child of a cluster-scoped parent must name its namespace", name))
	case pns == "":
		return nil
	case cns == "":
		child.SetNamespace(pns)
		return nil
	case cns != pns:
		return koperrors.Terminal(koperrors.Errorf(koperrors.Invalid,
			"desired child %s: in namespace %q, not its parent's %q: owner references do not cross namespaces", name, cns, pns))
	}
	return nil
}

// prune deletes the observed children that are no longer desired. They
// were listed labelled and controlled by the parent already, so gc.Delete
// deletes them as they are (UID preconditions, owned finalizers), with no
// second list. Nothing is sent when every observed child is still desired.
func (s *Syncer[T]) prune(ctx context.Context, parent T, env *Env, observed Children, desired []preparedChild) error {
	want := owners.RefSet{}
	for _, d := range desired {
		want.Add(d.ref)
	}
	var stale []client.Object
	for _, objs := range observed.byKind {
		for _, o := range objs {
			gvk, err := apiutil.GVKForObject(o, env.Scheme)
			if err != nil {
				return koperrors.WrapKind(koperrors.Internal, err, "prune", koperrors.ObjectOf(o))
			}
			if !want.Has(owners.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName()}) {
				stale = append(stale, o)
			}
		}
	}
	if len(stale) == 0 {
		return nil
	}
	res, err := gc.Delete(ctx, env.Client, stale, s.opts.Prune...)
	logger := log.FromContext(ctx)
	for _, r := range res.Deleted {
		env.Applier.Forget(refObject(r))
		logger.V(1).Info("Deleted child", "child", r.String(), "parent", klog.KObj(parent))
		recordNormal(env, parent, refObject(r), "Deleted", "deleted "+r.String()+": no longer desired")
	}
	for _, st := range res.Stuck {
		logger.Info("Child no longer desired waits on finalizers", "child", st.String(), "finalizers", st.Finalizers)
	}
	return err
}

// refObject returns a metadata-only object naming r, for Applier.Forget.
func refObject(r gc.Ref) client.Object {
	o := &metav1.PartialObjectMetadata{}
	o.SetGroupVersionKind(r.GroupVersionKind)
	o.SetNamespace(r.Namespace)
	o.SetName(r.Name)
	return o
}

// recordNormal records an event about parent whose related object is the
// child, so that events about different children never fold into one.
func recordNormal(env *Env, parent, child client.Object, reason, note string) {
	if env.Recorder != nil {
		observability.NormalRelated(env.Recorder, parent, child, reason, "Sync", note)
	}
}

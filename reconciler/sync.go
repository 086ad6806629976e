package reconciler

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/liveread"
	"github.com/kopgo/kopgo/internal/writelog"
	kopmeta "github.com/kopgo/kopgo/meta"
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
//  6. when it wrote a child, calls fn again with the children as the API
//     server returned them and repeats 3 to 5 for what it returns (see
//     "Cost" below);
//  7. records at most one Event on the parent, naming the children it
//     created, adopted, updated, recreated and deleted, and, unless fn set
//     the parent's conditions itself, summarises the children's readiness
//     into them (see "Readiness").
//
// Cost:
//
// With a manager's cached client and typed child kinds, a sync whose
// desired children are unchanged sends no request at all: lists come from
// the cache, the Applier skips children nobody changed since its last apply,
// pruning is only attempted when an observed child is no longer desired, and
// the loop writes status only when it changed (measured in the tests).
// Creating a child costs one request, its apply, when the cache of its kind
// is complete (Env.CompleteKinds: every child kind under the Builder's
// Run), and two otherwise: a live get and the apply.
// Pruning deletes the observed children it already holds (gc.Delete): no
// second list, no second informer. Unstructured child kinds are read live
// unless the manager's client caches unstructured objects.
//
// A change costs one reconcile. When a reconcile wrote children, Sync calls
// the sync function a second time in the same reconcile, with the observed
// children as the API server returned them from the applies (and without
// those it pruned), applies what that call returns (unchanged children
// cost nothing) and writes the parent's status once, from the second
// call. The watch events of the first call's applies are then taken as
// seen and wake nothing; a later change of a child (a Deployment's status,
// someone's edit, a deletion) wakes the parent as usual, and so do the
// events of whatever the second call wrote or pruned. So the sync function
// sees the children it wrote without waiting for their events, the parent
// gets one status write instead of two, and a sync function must be a
// function of the parent's spec and its children: it may run twice in one
// reconcile, the second time on the parent as the first call left it.
//
// The controller Builder watches the child kinds ([Syncer.ChildKinds], the
// [Owner] hook) so that a change to a child reconciles its parent; Sync
// relies on it to notice a child becoming ready. The package documentation
// says what Sync does with objects it did not create, drift, update
// strategies, dependencies, readiness, events, scope, the owner label and
// its design, under headings "Sync: ...".
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

	// live reads a child from the API server (readLive), remembering the
	// child kinds the operator may not get.
	live liveread.Reader
}

// resolvedKinds are a Syncer's declared kinds resolved for env.
type resolvedKinds struct {
	env   *Env
	kinds []childKind
	// byType are the kinds declared typed, by Go type: a desired child's
	// kind without a scheme lookup.
	byType map[reflect.Type]childKind
	// typedParentGVK is the parent's kind when T is a typed object (the
	// scheme's answer for T); zero for an unstructured T, whose objects
	// say their kind.
	typedParentGVK schema.GroupVersionKind
}

// syncSetup is what one reconcile of a parent works with: the kinds
// resolved, the owner label's key and the parent's kind.
type syncSetup struct {
	*resolvedKinds
	labelKey  string
	parentGVK schema.GroupVersionKind
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
	su, observed, byRef, err := s.observeAll(ctx, parent, env)
	if err != nil {
		return Done(), koperrors.Wrap(err, "sync", po)
	}
	// The first pass's applies are recorded as seen (their watch events
	// wake nothing): when it wrote, the sync function is called once more
	// with the children as the API server returned them, which is what
	// those events would have shown it.
	r, action, err := s.pass(ctx, parent, env, su, observed, byRef)
	if err != nil {
		return action, err
	}
	if r.settled() && len(r.applied) > 0 {
		observed, byRef = r.afterwards(su.kinds)
		// What the second pass writes, the sync function has not seen:
		// its events wake the parent again.
		first := r
		r, action, err = s.pass(writelog.Without(ctx), parent, env, su, observed, byRef)
		if err != nil {
			return action, err
		}
		r.follow(first)
	}
	r.recordEvent()
	if setter, ok := any(parent).(status.Setter); ok && !reportedProgress(setter) {
		r.summarise(setter)
	}
	if r.requeue > 0 {
		if after, requeue := action.When(); !requeue || (after > 0 && r.requeue < after) {
			action = RequeueAfter(r.requeue)
		}
	}
	if errs := slices.Concat(r.errs, r.refusals, r.heldBack()); len(errs) > 0 {
		return action, koperrors.Wrap(errors.Join(errs...), "sync", po)
	}
	return action, nil
}

// pass calls the sync function on observed and brings the children to
// what it returns: it applies them and, when every one is in place,
// prunes the observed children no longer returned. An error of the sync
// function is returned as is (its message lands in the parent's own
// status, where "sync <parent>:" would only repeat the object), and one of
// preparing the children wrapped.
func (s *Syncer[T]) pass(ctx context.Context, parent T, env *Env, su *syncSetup, observed Children, byRef map[kopmeta.ObjectRef]client.Object) (*syncRun[T], Action, error) {
	desired, action, err := s.fn(ctx, parent, observed)
	if err != nil {
		return nil, action, err
	}
	children, err := s.prepare(parent, env.Scheme, su, desired)
	if err != nil {
		return nil, action, koperrors.Wrap(err, "sync", kopmeta.RefOf(parent))
	}
	r := newSyncRun(s, parent, env, su, byRef)
	for _, c := range children {
		r.sync(ctx, c)
	}
	if r.settled() {
		// Keep the children that are going away until their replacements
		// are in place: a rename that fails to apply must not leave nothing.
		r.prune(ctx, children)
	}
	return r, action, nil
}

// Observe returns parent's observed children: the objects of the declared
// kinds that carry its owner label and are controlled by it, from the
// manager's cache, as the sync function receives them. A Cleanup defined
// on a type that embeds the Syncer calls it to see what it cleans up (see
// [Finalizer]).
func (s *Syncer[T]) Observe(ctx context.Context, parent T, env *Env) (Children, error) {
	_, observed, _, err := s.observeAll(ctx, parent, env)
	if err != nil {
		return nil, koperrors.Wrap(err, "observe children of", kopmeta.RefOf(parent))
	}
	return observed, nil
}

// observeAll resolves the kinds and the label, and lists the children.
func (s *Syncer[T]) observeAll(ctx context.Context, parent T, env *Env) (*syncSetup, Children, map[kopmeta.ObjectRef]client.Object, error) {
	su, err := s.setup(parent, env)
	if err != nil {
		return nil, nil, nil, err
	}
	observed, byRef, err := s.observe(ctx, parent, env, su.kinds, su.labelKey)
	if err != nil {
		s.resolved.Store(nil) // look the kinds up again next time
		return nil, nil, nil, err
	}
	return su, observed, byRef, nil
}

// reportedProgress reports whether the sync function set Reconciling or
// Stalled on the parent (the loop removes both before each reconcile): its
// report then stands instead of Sync's summary.
func reportedProgress(parent status.Setter) bool {
	return status.Get(parent, status.Reconciling) != nil || status.Get(parent, status.Stalled) != nil
}

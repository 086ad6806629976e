package reconciler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/gc"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/status"
)

// deletionPoll is how soon a parent waiting for a child to be deleted is
// reconciled again, should the child's deletion event not come first.
const deletionPoll = 2 * time.Second

// The verbs of the Synced event, in the order the event names them.
const (
	verbCreated   = "created"
	verbAdopted   = "adopted"
	verbUpdated   = "updated"
	verbRecreated = "deleted to recreate"
	verbDeleted   = "deleted"
)

var verbs = []string{verbCreated, verbAdopted, verbUpdated, verbRecreated, verbDeleted}

// childWait is a desired child Sync did not apply this time, and why.
type childWait struct{ reason, message string }

// syncRun is one Reconcile's work on the desired children, and its outcome.
type syncRun[T client.Object] struct {
	s          *Syncer[T]
	parent     T
	parentGVK  schema.GroupVersionKind
	env        *Env
	labelKey   string
	observed   map[kopmeta.ObjectRef]client.Object
	applyOpts  []client.ApplyOption
	fieldOwner string

	ready       map[kopmeta.ObjectRef]bool
	failed      []string // readiness messages
	progressing []string
	waits       []childWait
	changes     map[string][]string // verb -> children
	readyMsgs   []string            // what each current child's readiness says
	failedFinal bool                // a failed child that nothing retries
	// kinds are the declared kinds (their options, for pruning).
	kinds    []childKind
	errs     []error
	refusals []error
	// refused are the desired children Sync refused (taken names), and
	// unwritten the children not written because they depend on one,
	// such as children in a Namespace that is someone else's.
	refused   sets.Set[kopmeta.ObjectRef]
	unwritten map[kopmeta.ObjectRef][]kopmeta.ObjectRef // refused child -> children held back
	requeue   time.Duration
	// applied are the children this run wrote, as the API server returned
	// them, and gone the observed children it deleted (or asked to).
	applied map[kopmeta.ObjectRef]appliedChild
	gone    sets.Set[kopmeta.ObjectRef]
}

func newSyncRun[T client.Object](s *Syncer[T], parent T, env *Env, su *syncSetup, observed map[kopmeta.ObjectRef]client.Object) *syncRun[T] {
	r := &syncRun[T]{
		s: s, parent: parent, parentGVK: su.parentGVK, env: env, labelKey: su.labelKey, observed: observed,
		// Sync decides adoption of the objects it sees itself (sync), so
		// the Applier need not refuse an orphan Sync chose to adopt; for
		// a child it did not see, create lets the Applier check.
		applyOpts: append([]client.ApplyOption{apply.Force(true), apply.AdoptOrphans(true)}, s.opts.Apply...),
		ready:     map[kopmeta.ObjectRef]bool{},
		refused:   sets.New[kopmeta.ObjectRef](),
		unwritten: map[kopmeta.ObjectRef][]kopmeta.ObjectRef{},
		changes:   map[string][]string{},
		applied:   map[kopmeta.ObjectRef]appliedChild{},
		gone:      sets.New[kopmeta.ObjectRef](),
		kinds:     su.kinds,
	}
	r.fieldOwner = (&client.ApplyOptions{FieldManager: env.Applier.FieldOwner()}).ApplyOptions(r.applyOpts).FieldManager
	return r
}

// sync brings one desired child to its desired state, or records why not.
func (r *syncRun[T]) sync(ctx context.Context, c preparedChild) {
	existing, err := r.find(ctx, c)
	if err != nil {
		r.errs = append(r.errs, err)
		return
	}
	// Dependencies gate writes: a child that exists and is never written
	// again (CreateOnce, OnDelete, a RunOnce child of its current run)
	// waits for nothing.
	if existing == nil || c.opts.Update.writesExisting() || !sameRun(c, existing) {
		for _, d := range c.deps {
			if r.refused.Has(d) {
				// Refused for good: what depends on it (a child in a
				// Namespace someone else holds) is not written either.
				r.unwritten[d] = append(r.unwritten[d], c.ref)
				return
			}
		}
		for _, d := range c.deps {
			if !r.ready[d] {
				r.wait("WaitingForDependency", fmt.Sprintf("%s waits for %s to be ready", c.ref, d), 0)
				return
			}
		}
	}
	if existing == nil {
		r.create(ctx, c)
		return
	}
	if kopmeta.IsBeingDeleted(existing) {
		r.wait("WaitingForDeletion", fmt.Sprintf("%s is being deleted; it is created again once it is gone", c.ref), deletionPoll)
		return
	}
	ctrl := metav1.GetControllerOf(existing)
	switch {
	case ctrl != nil && ctrl.UID == r.parent.GetUID():
		// Ours.
	case ctrl != nil && r.earlierParent(ctrl):
		r.wait("WaitingForDeletion", fmt.Sprintf("%s is controlled by an earlier %s %s, since deleted: waiting for the garbage collector to remove it",
			c.ref, ctrl.Kind, ctrl.Name), deletionPoll)
		return
	case ctrl != nil:
		r.refuse(c, ctrl, fmt.Sprintf(
			"desired child %s: the object of that name is controlled by %s %s (uid %s), not by this %s: Sync never takes over an object it did not create; rename the child or remove that object",
			c.ref, ctrl.Kind, ctrl.Name, ctrl.UID, r.parentGVK.Kind))
		return
	case !c.opts.AdoptOrphans:
		r.refuse(c, nil, fmt.Sprintf(
			"desired child %s: the object of that name has no controller and Sync never takes over an object it did not create; adopt it with reconciler.AdoptOrphans(true), rename the child or remove that object",
			c.ref))
		return
	default:
		r.update(ctx, c, existing, verbAdopted)
		return
	}
	switch {
	case !sameRun(c, existing):
		// A new run: the old one goes, the new one is created once it is
		// gone.
		r.recreate(ctx, c, existing, fmt.Errorf("run %q replaces run %q", c.obj.GetAnnotations()[RunOnceAnnotation], existing.GetAnnotations()[RunOnceAnnotation]))
	case !c.opts.Update.writesExisting():
		r.current(c, existing)
	default:
		r.update(ctx, c, existing, verbUpdated)
	}
}

// find returns the object of c's name: the observed child, else the
// cache's object, else (when the cache has none, its kind is not among
// Env.CompleteKinds, and Env.Reader is set) the API server's, read live
// by name ([Syncer.readLive]). nil when there is none.
func (r *syncRun[T]) find(ctx context.Context, c preparedChild) (client.Object, error) {
	if o, ok := r.observed[c.ref]; ok {
		return o, nil
	}
	obj := newObject(r.env.Scheme, c.kind)
	err := r.env.Client.Get(ctx, client.ObjectKey{Namespace: c.ref.Namespace, Name: c.ref.Name}, obj)
	switch {
	case err == nil:
		return obj, nil
	case apierrors.IsNotFound(err):
		if slices.Contains(r.env.CompleteKinds, c.kind.gvk.GroupKind()) {
			// The cache holds every object of the kind: its absence is
			// the answer, up to its lag, which create covers.
			return nil, nil
		}
	default:
		log.FromContext(ctx).V(1).Info("Cache read failed, reading the API server", "child", c.ref.String(), "error", err.Error())
	}
	if r.env.Reader == nil {
		return nil, nil
	}
	found, err := r.s.readLive(ctx, r.env, c)
	if err != nil {
		return nil, koperrors.Wrap(err, "read child", kopmeta.ObjectRef{Group: c.kind.gvk.Group, Kind: c.kind.gvk.Kind, Namespace: c.ref.Namespace, Name: c.ref.Name})
	}
	return found, nil
}

// readLive reads the object of c's name from the API server (Env.Reader),
// with a get or, for a kind the operator may not get, a list by name (see
// internal/liveread). nil when there is none.
func (s *Syncer[T]) readLive(ctx context.Context, env *Env, c preparedChild) (client.Object, error) {
	key := client.ObjectKey{Namespace: c.ref.Namespace, Name: c.ref.Name}
	return s.live.Read(ctx, env.Reader, c.kind.gvk, key,
		func() client.Object { return newObject(env.Scheme, c.kind) },
		func() client.ObjectList { return newList(env.Scheme, c.kind) })
}

// earlierParent reports whether ctrl names a parent of this one's kind and
// name with another UID: this parent's predecessor, deleted (names are
// unique), whose children the garbage collector is removing.
func (r *syncRun[T]) earlierParent(ctrl *metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ctrl.APIVersion)
	return err == nil && gv.Group == r.parentGVK.Group && ctrl.Kind == r.parentGVK.Kind && ctrl.Name == r.parent.GetName()
}

// create applies a child that neither the cache nor, for a kind whose
// cache may be filtered, the API server had a moment ago. Server-side
// apply has no create-only precondition, so an object someone else created
// in between (after the API server's answer, or in the cache's lag) is
// taken over by the apply. The Applier tells, unless the child may adopt
// orphans: it expects a 201, or a 200 for the object it created itself
// (its record knows the UID; the cache lags behind our own creations as
// well), and for any other object it removes its controller reference
// again and returns an *apply.TakeoverError that says the object
// appeared. disown then removes the owner label too, and reports it. An
// object with another controller fails the apply: two controller
// references are invalid.
func (r *syncRun[T]) create(ctx context.Context, c preparedChild) {
	res, err := r.env.Applier.Apply(ctx, c.obj, slices.Concat(r.applyOpts, []client.ApplyOption{apply.AdoptOrphans(c.opts.AdoptOrphans)})...)
	if terr, ok := errors.AsType[*apply.TakeoverError](err); ok && terr.Appeared {
		r.errs = append(r.errs, r.disown(ctx, c, terr.Manager))
		return
	}
	if err != nil {
		if terr, ok := errors.AsType[*apply.TakeoverError](err); ok && koperrors.IsTerminal(terr) {
			r.refused.Insert(c.ref)
		}
		r.errs = append(r.errs, err)
		return
	}
	switch res.Outcome {
	case apply.Created:
		r.changed(verbCreated, c.ref)
		r.applied[c.ref] = appliedChild{kind: c.kind, res: res}
	case apply.Updated:
		r.changed(verbUpdated, c.ref)
		r.applied[c.ref] = appliedChild{kind: c.kind, res: res}
	}
	r.current(c, res.Object())
}

// disown removes the owner label (and the controller reference, should the
// Applier have failed to) that the apply of c just put on an object
// someone else created, by applying c without them (server-side apply
// removes what its field manager no longer sets and nobody else does), and
// returns the error that reports it.
func (r *syncRun[T]) disown(ctx context.Context, c preparedChild, other string) error {
	intent := c.obj.DeepCopyObject().(client.Object)
	refs := intent.GetOwnerReferences()
	kept := refs[:0]
	for _, o := range refs {
		if o.UID != r.parent.GetUID() {
			kept = append(kept, o)
		}
	}
	intent.SetOwnerReferences(kept)
	labels := intent.GetLabels()
	delete(labels, r.labelKey)
	intent.SetLabels(labels)
	_, err := r.env.Applier.Apply(ctx, intent, r.applyOpts...)
	if err != nil {
		err = fmt.Errorf("removing its controller reference and owner label again failed: %w", err)
	} else {
		err = errors.New("its controller reference and owner label were removed again")
	}
	log.FromContext(ctx).Info("Desired child appeared while Sync created it", "child", c.ref.String(), "fieldManager", other, "parent", klog.KObj(r.parent))
	return koperrors.WrapKind(koperrors.Conflict, fmt.Errorf(
		"desired child %s: an object of that name was created by %q while Sync was creating it, and Sync's apply took it over; %w",
		c.ref, other, err), "sync child", kopmeta.ObjectRef{})
}

// update applies c to an existing child, recreating it when c's strategy
// says so and the API server refuses the change as immutable.
func (r *syncRun[T]) update(ctx context.Context, c preparedChild, existing client.Object, verb string) {
	// existing is the object as read (observed, or from the cache or the
	// API server): the Applier need not read the cache for it again.
	res, err := r.env.Applier.Apply(ctx, c.obj, slices.Concat(r.applyOpts, []client.ApplyOption{apply.Current(existing)})...)
	if err != nil {
		if c.opts.Update == Recreate && immutable(err) {
			r.recreate(ctx, c, existing, err)
			return
		}
		r.errs = append(r.errs, err)
		return
	}
	if res.Outcome == apply.Unchanged {
		// Nothing was sent: the object as read is the object as it is,
		// and converting the Applier's copy would only cost time.
		r.current(c, existing)
		return
	}
	r.changed(verb, c.ref)
	r.applied[c.ref] = appliedChild{kind: c.kind, res: res}
	r.current(c, res.Object())
}

// recreate deletes existing (UID precondition) so that a later reconcile
// creates c anew.
func (r *syncRun[T]) recreate(ctx context.Context, c preparedChild, existing client.Object, cause error) {
	res, err := gc.Delete(ctx, r.env.Client, []client.Object{existing}, append(slices.Clone(r.s.opts.Prune), c.opts.Delete...)...)
	if len(res.Deleted) > 0 {
		r.env.Applier.Forget(existing)
	}
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("recreate %s: %w", c.ref, err))
		return
	}
	log.FromContext(ctx).V(1).Info("Deleted child to recreate it", "child", c.ref.String(), "cause", cause.Error())
	r.changed(verbRecreated, c.ref)
	why := immutableCauses(cause)
	if why == "" {
		why = cause.Error()
	}
	r.wait("Recreating", fmt.Sprintf("%s is being recreated: %s", c.ref, why), deletionPoll)
}

// current records the readiness of child c as it now is.
func (r *syncRun[T]) current(c preparedChild, obj client.Object) {
	rd := status.ReadinessOf(obj)
	r.ready[c.ref] = rd.State == status.StateCurrent
	switch rd.State {
	case status.StateCurrent:
		r.readyMsgs = append(r.readyMsgs, readyNote(c.ref, rd))
	case status.StateFailed:
		r.failed = append(r.failed, rd.Message)
		if !c.opts.Update.writesExisting() {
			// Nothing retries a child Sync never writes again (a failed
			// run stays failed until its key changes): a verdict.
			r.failedFinal = true
		}
	case status.StateInProgress, status.StateTerminating:
		r.progressing = append(r.progressing, rd.Message)
	}
}

func (r *syncRun[T]) wait(reason, message string, poll time.Duration) {
	r.waits = append(r.waits, childWait{reason: reason, message: message})
	if poll > 0 && (r.requeue == 0 || poll < r.requeue) {
		r.requeue = poll
	}
}

func (r *syncRun[T]) changed(verb string, ref kopmeta.ObjectRef) {
	r.changes[verb] = append(r.changes[verb], ref.String())
}

// prune deletes the observed children that are no longer desired. They
// were listed labelled and controlled by the parent already, so gc.Delete
// deletes them as they are (UID preconditions, owned finalizers), with no
// second list. Nothing is sent when every observed child is still desired.
func (r *syncRun[T]) prune(ctx context.Context, desired []preparedChild) {
	want := sets.New[kopmeta.ObjectRef]()
	for _, d := range desired {
		want.Insert(d.ref)
	}
	var refs []kopmeta.ObjectRef
	for ref := range r.observed {
		if !want.Has(ref) {
			refs = append(refs, ref)
		}
	}
	if len(refs) == 0 {
		return
	}
	slices.SortFunc(refs, kopmeta.ObjectRef.Compare)
	// One delete call per kind, with the kind's options (DeleteWith).
	byKind := map[schema.GroupKind][]client.Object{}
	var order []schema.GroupKind
	for _, ref := range refs {
		gk := schema.GroupKind{Group: ref.Group, Kind: ref.Kind}
		if _, ok := byKind[gk]; !ok {
			order = append(order, gk)
		}
		byKind[gk] = append(byKind[gk], r.observed[ref])
	}
	logger := log.FromContext(ctx)
	for _, gk := range order {
		opts := slices.Clone(r.s.opts.Prune)
		if i := slices.IndexFunc(r.kinds, func(k childKind) bool { return k.gvk.GroupKind() == gk }); i >= 0 {
			opts = append(opts, r.kinds[i].defaults.Delete...)
		}
		res, err := gc.Delete(ctx, r.env.Client, byKind[gk], opts...)
		for _, d := range res.Deleted {
			r.gone.Insert(d)
			if obj, ok := r.observed[d]; ok {
				r.env.Applier.Forget(obj)
			}
			logger.V(1).Info("Deleted child", "child", d.String(), "parent", klog.KObj(r.parent))
			r.changes[verbDeleted] = append(r.changes[verbDeleted], d.String())
		}
		for _, st := range res.Stuck {
			r.gone.Insert(st.ObjectRef)
			logger.Info("Child no longer desired waits on finalizers", "child", st.String(), "finalizers", st.Finalizers)
		}
		if err != nil {
			r.errs = append(r.errs, err)
		}
	}
}

// sameRun reports whether existing belongs to the run c wants: always,
// unless c is a RunOnce child whose run key differs.
func sameRun(c preparedChild, existing client.Object) bool {
	return c.opts.Update != RunOnceStrategy || existing.GetAnnotations()[RunOnceAnnotation] == c.obj.GetAnnotations()[RunOnceAnnotation]
}

package reconciler

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Child wraps a desired child, or an entry of [Sync]'s childKinds, with
// options: how it is updated, what it waits for, whether an orphan of its
// name may be adopted.
//
//	return []client.Object{
//		secret,
//		reconciler.Child(deployment, reconciler.DependsOn{secret}),
//		reconciler.Child(migration, reconciler.Recreate),
//	}, nil
//
// Wrapping an entry of childKinds sets the defaults of that kind, which a
// wrapped desired child overrides option by option:
//
//	reconciler.Sync([]client.Object{&appsv1.Deployment{}, reconciler.Child(&batchv1.Job{}, reconciler.Recreate)}, sync)
//
// The options live in the wrapper, never in the object: nothing of them
// reaches the API server. The wrapper is a client.Object (its methods are
// obj's) but not obj's Go type; it has an Unwrap() client.Object method
// for a unit test that wants obj back.
func Child(obj client.Object, opts ...ChildOption) client.Object {
	if obj == nil {
		return nil
	}
	w := &wrappedChild{Object: obj}
	if inner, ok := obj.(*wrappedChild); ok { // Child(Child(x, a), b): a then b
		w.Object, w.opts = inner.Object, inner.opts
		w.opts.DependsOn = append([]client.Object(nil), inner.opts.DependsOn...)
	}
	for _, o := range opts {
		if o != nil {
			o.ApplyToChildOptions(&w.opts)
		}
	}
	return w
}

// ChildOptions are the options of one child ([Child]) or of a child kind.
// The zero value is the default: update in place, no dependencies, never
// adopt.
type ChildOptions struct {
	// Update is how an existing child is brought to its new version.
	Update UpdateStrategy
	// DependsOn are desired children this one waits for: it is applied only
	// once each of them is ready (status.ReadinessOf). Per child only.
	DependsOn []client.Object
	// AdoptOrphans lets Sync take over an existing object of the child's
	// name that has no controller (see "Sync: objects it did not create" in
	// the package documentation). An object controlled by anything else is
	// never adopted.
	AdoptOrphans bool
	// RunKey is the run of a [RunOnce] child: the child is created anew
	// when it changes. Empty: the parent's metadata.generation.
	RunKey string
	// Delete are the options of deleting the child, when it is pruned or
	// recreated ([DeleteWith]), after Sync's own (WithPruneOptions).
	Delete []client.DeleteOption
	// set records which fields were given, so that a child's options
	// override its kind's only where given.
	set childFields
}

type childFields struct{ update, adopt, delete bool }

// ChildOption is an option of [Child]: an [UpdateStrategy], [RunOnce],
// [DependsOn], [AdoptOrphans] or [DeleteWith].
type ChildOption interface {
	// ApplyToChildOptions sets the option on o.
	ApplyToChildOptions(o *ChildOptions)
}

// UpdateStrategy is how Sync brings an existing child to a new version.
type UpdateStrategy uint8

const (
	// InPlace applies the new version to the existing child (server-side
	// apply). The default.
	InPlace UpdateStrategy = iota
	// Recreate applies in place, and when the API server refuses the apply
	// because a field that cannot change would change (a Job's template, a
	// Deployment's selector, a Service's clusterIP), deletes the child (UID
	// precondition, Prune's options) and creates the new version on a later
	// reconcile, once the old one is gone. Any other refusal is reported as
	// is: an invalid child never costs its working predecessor.
	Recreate
	// OnDelete leaves an existing child alone (no apply at all, so no drift
	// is reverted either) until someone deletes it; then the new version is
	// created. StatefulSet's OnDelete, for children whose replacement a
	// person times.
	OnDelete
	// CreateOnce creates the child when it is missing and never writes it
	// again, whatever the sync function returns: a generated password, a
	// key or a certificate, which a sync function may generate afresh on
	// every call (the stored one wins, and the observed child carries it).
	// Deleted by someone, it is created again, from the next call's value.
	CreateOnce
	// RunOnceStrategy is the strategy [RunOnce] sets: the child is created
	// once per run key, and never written again while the key is the same.
	RunOnceStrategy
)

// String returns "InPlace", "Recreate", "OnDelete", "CreateOnce" or
// "RunOnce".
func (s UpdateStrategy) String() string {
	switch s {
	case Recreate:
		return "Recreate"
	case OnDelete:
		return "OnDelete"
	case CreateOnce:
		return "CreateOnce"
	case RunOnceStrategy:
		return "RunOnce"
	default:
		return "InPlace"
	}
}

// writesExisting reports whether the strategy ever applies to a child
// that exists.
func (s UpdateStrategy) writesExisting() bool { return s == InPlace || s == Recreate }

// RunOnce makes a child run once per key: a migration Job per spec
// generation. Sync creates it when it is missing, marks it with the key
// (annotation kopgo.dev/run-once), and never applies it again while the
// key is the same, so a Job, which cannot change, runs to its end and its
// outcome stays readable: the sync function finds it among the observed
// children (status.ReadinessOf says succeeded or failed, and why), and
// Sync's summary of the parent's Ready names a failed one. When the key
// changes, the old child is deleted and the new one created once it is
// gone. An empty key is the parent's metadata.generation: one run per
// spec.
//
//	reconciler.Child(migrationJob(db), reconciler.RunOnce(db.Spec.Version))
type RunOnce string

// ApplyToChildOptions implements [ChildOption].
func (k RunOnce) ApplyToChildOptions(o *ChildOptions) {
	o.Update, o.RunKey, o.set.update = RunOnceStrategy, string(k), true
}

// DeleteWith sets the options of deleting a child when it is pruned (no
// longer desired) or recreated, for its kind (wrap the kind's example in
// [Child]) or for one child being recreated: controller-runtime's
// client.DeleteOption, such as
// client.PropagationPolicy(metav1.DeletePropagationOrphan), which deletes
// a Job but leaves its Pods for a person to read. They come after Sync's
// own ([WithPruneOptions]).
type DeleteWith []client.DeleteOption

// ApplyToChildOptions implements [ChildOption].
func (d DeleteWith) ApplyToChildOptions(o *ChildOptions) {
	o.Delete, o.set.delete = append(o.Delete, d...), true
}

// ApplyToChildOptions implements [ChildOption].
func (s UpdateStrategy) ApplyToChildOptions(o *ChildOptions) {
	o.Update, o.set.update = s, true
}

// DependsOn makes a child wait for other desired children (the objects the
// sync function returns, or any object of the same kind, namespace and
// name): Sync applies it only once each of them is ready, and until then
// reports the parent Reconciling, naming the child it waits for.
type DependsOn []client.Object

// ApplyToChildOptions implements [ChildOption].
func (d DependsOn) ApplyToChildOptions(o *ChildOptions) {
	o.DependsOn = append(o.DependsOn, d...)
}

// AdoptOrphans is the AdoptOrphans option: AdoptOrphans(true) lets Sync take
// over an existing object of the child's name that has no controller
// reference. An object controlled by anything else is never adopted.
type AdoptOrphans bool

// ApplyToChildOptions implements [ChildOption].
func (a AdoptOrphans) ApplyToChildOptions(o *ChildOptions) {
	o.AdoptOrphans, o.set.adopt = bool(a), true
}

// over returns the options of a child of a kind with defaults kind: the
// child's where given, the kind's otherwise.
func (opts ChildOptions) over(kind ChildOptions) ChildOptions {
	out := opts
	if !opts.set.update {
		out.Update = kind.Update
	}
	if !opts.set.update {
		out.RunKey = kind.RunKey
	}
	if !opts.set.adopt {
		out.AdoptOrphans = kind.AdoptOrphans
	}
	if !opts.set.delete {
		out.Delete = kind.Delete
	}
	return out
}

// wrappedChild is what [Child] returns: the object and its options.
type wrappedChild struct {
	client.Object
	opts ChildOptions
}

// Unwrap returns the wrapped object.
func (w *wrappedChild) Unwrap() client.Object { return w.Object }

// ChildOf returns the object and the options of a desired child or of a
// kind example, wrapped by [Child] or not (then with the zero options), so
// that a unit test of a sync function can check what it returned:
//
//	desired, _, _ := syncFn(ctx, db, nil)
//	job, opts := reconciler.ChildOf(desired[2])
//	if opts.Update != reconciler.RunOnceStrategy { ... }
//
// Options a kind sets apply too where the child's own do not; ChildOf
// shows only the child's.
func ChildOf(obj client.Object) (client.Object, ChildOptions) { return unwrapChild(obj) }

// unwrapChild returns the object and the options of a desired child or kind
// example, wrapped or not.
func unwrapChild(obj client.Object) (client.Object, ChildOptions) {
	if w, ok := obj.(*wrappedChild); ok {
		return w.Object, w.opts
	}
	return obj, ChildOptions{}
}

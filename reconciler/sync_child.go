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
	// name that has no controller (see "Objects Sync did not create" in
	// [Sync]). An object controlled by anything else is never adopted.
	AdoptOrphans bool
	// set records which fields were given, so that a child's options
	// override its kind's only where given.
	set childFields
}

type childFields struct{ update, adopt bool }

// ChildOption is an option of [Child]: an [UpdateStrategy], [DependsOn] or
// [AdoptOrphans].
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
)

// String returns "InPlace", "Recreate" or "OnDelete".
func (s UpdateStrategy) String() string {
	switch s {
	case Recreate:
		return "Recreate"
	case OnDelete:
		return "OnDelete"
	default:
		return "InPlace"
	}
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
	if !opts.set.adopt {
		out.AdoptOrphans = kind.AdoptOrphans
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

// unwrapChild returns the object and the options of a desired child or kind
// example, wrapped or not.
func unwrapChild(obj client.Object) (client.Object, ChildOptions) {
	if w, ok := obj.(*wrappedChild); ok {
		return w.Object, w.opts
	}
	return obj, ChildOptions{}
}

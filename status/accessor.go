package status

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Accessor is a [Setter] over an object whose Go type cannot get the
// condition methods: a type from another module, a frozen API, the types
// of kubebuilder's CronJob tutorial. Everything in this package that takes
// a Getter or a Setter takes it, with the semantics of the method form:
//
//	s := status.Access(&cronJob, &cronJob.Status.Conditions)
//	status.MarkReady(s, "Scheduled", "next run at 10:00")
//	status.SetError(s, err)
//
// It embeds the object, so its name, generation and the rest of
// metav1.Object are the object's. [NewPatcher] and [Patcher.Patch] take
// either the Accessor or the object itself. Functions of other packages
// that look the object's Go type up in a scheme (owners, apply, gc, the
// event recorder) need the object itself, not the Accessor.
//
// An Accessor reads and writes the object it was made for: make one per
// object read, after reading it. Use [Accessor.WithObservedGeneration] for
// a type with status.observedGeneration.
type Accessor struct {
	client.Object
	get func() []metav1.Condition
	set func([]metav1.Condition)
}

var _ Setter = (*Accessor)(nil)

// Access returns a [Setter] over obj whose conditions are the slice that
// conditions points to, a field of obj (&obj.Status.Conditions). Neither
// may be nil.
func Access(obj client.Object, conditions *[]metav1.Condition) *Accessor {
	return AccessFuncs(obj,
		func() []metav1.Condition { return *conditions },
		func(c []metav1.Condition) { *conditions = c })
}

// AccessFuncs returns a [Setter] over obj whose conditions get returns and
// set replaces, for conditions that are not a []metav1.Condition field
// (another module's condition type, converted both ways). get must return
// what set stored last, as the method form would; the caller does not
// modify the slice get returns. None may be nil.
func AccessFuncs(obj client.Object, get func() []metav1.Condition, set func([]metav1.Condition)) *Accessor {
	return &Accessor{Object: obj, get: get, set: set}
}

// GetConditions implements [Getter].
func (a *Accessor) GetConditions() []metav1.Condition { return a.get() }

// SetConditions implements [Setter].
func (a *Accessor) SetConditions(c []metav1.Condition) { a.set(c) }

// WithObservedGeneration returns a [Setter] and [ObservedGenerationAccessor]
// over the same object, whose status.observedGeneration is the int64 that
// g points to (&obj.Status.ObservedGeneration; not nil): [Finish],
// [SetError], [SetObservedGeneration] and [IsCurrent] then use it as they
// use the methods of the method form.
func (a *Accessor) WithObservedGeneration(g *int64) *GenerationAccessor {
	return &GenerationAccessor{Accessor: a, generation: g}
}

// accessedObject returns the object a is a Setter over.
func (a *Accessor) accessedObject() client.Object { return a.Object }

// GenerationAccessor is an [Accessor] that also gives the object's
// status.observedGeneration: a [Setter] and an
// [ObservedGenerationAccessor]. Make it with [Accessor.WithObservedGeneration]:
//
//	s := status.Access(&cronJob, &cronJob.Status.Conditions).WithObservedGeneration(&cronJob.Status.ObservedGeneration)
type GenerationAccessor struct {
	*Accessor
	generation *int64
}

var (
	_ Setter                     = (*GenerationAccessor)(nil)
	_ ObservedGenerationAccessor = (*GenerationAccessor)(nil)
)

// GetObservedGeneration implements [ObservedGenerationAccessor].
func (g *GenerationAccessor) GetObservedGeneration() int64 { return *g.generation }

// SetObservedGeneration implements [ObservedGenerationAccessor].
func (g *GenerationAccessor) SetObservedGeneration(v int64) { *g.generation = v }

// unwrap returns the object an Accessor is a Setter over, or obj itself.
func unwrap(obj client.Object) client.Object {
	if a, ok := obj.(interface{ accessedObject() client.Object }); ok {
		return a.accessedObject()
	}
	return obj
}

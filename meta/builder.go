package meta

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NameRule is the format a kind requires of metadata.name.
type NameRule uint8

const (
	// DNS1123Subdomain allows lower-case alphanumerics, '-' and '.', at most 253
	// characters. Most kinds (ConfigMap, Deployment, custom resources).
	DNS1123Subdomain NameRule = iota
	// DNS1123Label allows lower-case alphanumerics and '-', at most 63 characters.
	// Service, Namespace, and any name that becomes a DNS label or a label
	// value.
	DNS1123Label
)

// Builder assembles object metadata. Each method records one thing and
// returns the Builder for chaining; nothing is checked until [Builder.Build],
// [Builder.ApplyConfiguration] or [Builder.ApplyTo], which report every
// problem at once. Results never share maps or slices with the Builder or
// with each other, so one Builder can stamp out many objects.
type Builder struct {
	name, generateName, namespace string
	nameRule                      NameRule
	labels, annotations           map[string]string
	finalizers                    []string
	owners                        []owner
}

// owner is an owner reference as given, with what is needed to report a
// missing GVK at build time.
type owner struct {
	ref     metav1.OwnerReference
	missing string // non-empty: the owner's GVK was not known; names the owner
}

// New starts metadata for an object called name.
func New(name string) *Builder { return &Builder{name: name} }

// GenerateName starts metadata for an object whose name the API server
// generates from prefix.
func GenerateName(prefix string) *Builder { return &Builder{generateName: prefix} }

// Clone returns an independent copy of the Builder.
func (b *Builder) Clone() *Builder {
	c := *b
	c.labels = maps.Clone(b.labels)
	c.annotations = maps.Clone(b.annotations)
	c.finalizers = slices.Clone(b.finalizers)
	c.owners = slices.Clone(b.owners)
	return &c
}

// NameRule sets the format the name must have. Default [DNS1123Subdomain].
func (b *Builder) NameRule(r NameRule) *Builder { b.nameRule = r; return b }

// Namespace sets metadata.namespace.
func (b *Builder) Namespace(ns string) *Builder { b.namespace = ns; return b }

// Label sets one label.
func (b *Builder) Label(key, value string) *Builder {
	if b.labels == nil {
		b.labels = map[string]string{}
	}
	b.labels[key] = value
	return b
}

// Labels sets several labels, keeping those set before.
func (b *Builder) Labels(labels map[string]string) *Builder {
	for k, v := range labels {
		b.Label(k, v)
	}
	return b
}

// Annotation sets one annotation.
func (b *Builder) Annotation(key, value string) *Builder {
	if b.annotations == nil {
		b.annotations = map[string]string{}
	}
	b.annotations[key] = value
	return b
}

// Annotations sets several annotations, keeping those set before.
func (b *Builder) Annotations(annotations map[string]string) *Builder {
	for k, v := range annotations {
		b.Annotation(k, v)
	}
	return b
}

// Finalizer adds a finalizer (once).
func (b *Builder) Finalizer(name string) *Builder {
	if !slices.Contains(b.finalizers, name) {
		b.finalizers = append(b.finalizers, name)
	}
	return b
}

// OwnerReference adds an owner reference as given.
func (b *Builder) OwnerReference(ref metav1.OwnerReference) *Builder {
	b.owners = append(b.owners, owner{ref: ref})
	return b
}

// Owner adds a reference to owner, an object of kind gvk. Typed objects read
// through a client have no TypeMeta, hence gvk; an empty gvk falls back to
// the owner's TypeMeta, and Build reports an owner whose kind is unknown.
func (b *Builder) Owner(o client.Object, gvk schema.GroupVersionKind) *Builder {
	return b.addOwner(o, gvk, false)
}

// ControlledBy adds a controller reference to owner (controller and
// blockOwnerDeletion set), as a controller does for the objects it manages.
// An object has at most one controller.
func (b *Builder) ControlledBy(o client.Object, gvk schema.GroupVersionKind) *Builder {
	return b.addOwner(o, gvk, true)
}

func (b *Builder) addOwner(o client.Object, gvk schema.GroupVersionKind, controller bool) *Builder {
	if gvk.Empty() {
		gvk = o.GetObjectKind().GroupVersionKind()
	}
	ref := metav1.OwnerReference{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
		Name: o.GetName(), UID: o.GetUID(),
	}
	if controller {
		ref.Controller, ref.BlockOwnerDeletion = new(true), new(true)
	}
	ow := owner{ref: ref}
	if gvk.Kind == "" {
		ow.missing = o.GetName()
	}
	b.owners = append(b.owners, ow)
	return b
}

// Build returns the metadata, or a [*ValidationError] listing every problem.
func (b *Builder) Build() (metav1.ObjectMeta, error) {
	if err := b.validate(); err != nil {
		return metav1.ObjectMeta{}, err
	}
	return metav1.ObjectMeta{
		Name: b.name, GenerateName: b.generateName, Namespace: b.namespace,
		Labels: maps.Clone(b.labels), Annotations: maps.Clone(b.annotations),
		Finalizers: slices.Clone(b.finalizers), OwnerReferences: b.ownerRefs(),
	}, nil
}

// ApplyConfiguration returns the metadata in server-side apply form, or a
// [*ValidationError]. Only what was set is in it, so an apply owns no other
// metadata field.
func (b *Builder) ApplyConfiguration() (*metav1ac.ObjectMetaApplyConfiguration, error) {
	if err := b.validate(); err != nil {
		return nil, err
	}
	ac := metav1ac.ObjectMeta()
	if b.name != "" {
		ac.WithName(b.name)
	}
	if b.generateName != "" {
		ac.WithGenerateName(b.generateName)
	}
	if b.namespace != "" {
		ac.WithNamespace(b.namespace)
	}
	if len(b.labels) > 0 {
		ac.WithLabels(b.labels) // WithLabels copies entries
	}
	if len(b.annotations) > 0 {
		ac.WithAnnotations(b.annotations)
	}
	if len(b.finalizers) > 0 {
		ac.WithFinalizers(b.finalizers...)
	}
	for _, ref := range b.ownerRefs() {
		r := metav1ac.OwnerReference().WithAPIVersion(ref.APIVersion).WithKind(ref.Kind).WithName(ref.Name).WithUID(ref.UID)
		if ref.Controller != nil {
			r.WithController(*ref.Controller)
		}
		if ref.BlockOwnerDeletion != nil {
			r.WithBlockOwnerDeletion(*ref.BlockOwnerDeletion)
		}
		ac.WithOwnerReferences(r)
	}
	return ac, nil
}

func (b *Builder) ownerRefs() []metav1.OwnerReference {
	if len(b.owners) == 0 {
		return nil
	}
	refs := make([]metav1.OwnerReference, len(b.owners))
	for i, o := range b.owners {
		refs[i] = *o.ref.DeepCopy()
	}
	return refs
}

package meta

import (
	"maps"
	"reflect"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Builder assembles object metadata. Each method records one thing and
// returns the Builder for chaining; nothing is checked until [Builder.Build],
// [Builder.ApplyConfiguration] or [Builder.ApplyTo], which report every
// problem at once as a [*ValidationError].
//
// Results never share maps, slices or pointers with the Builder or with each
// other, so one Builder can stamp out many objects. The methods change the
// Builder they are called on; use [Builder.Clone] to branch a shared base.
//
// The zero value is an empty Builder (no name yet); [New] and
// [GenerateName] are the usual starting points. A Builder is not safe for
// concurrent modification; concurrent Build calls on a Builder nobody
// modifies are safe.
type Builder struct {
	name, generateName, namespace string
	nameRule                      NameRule
	labels, annotations           map[string]string
	finalizers                    []string
	owners                        []owner
}

// owner is an owner reference as the caller gave it, plus what validation
// needs to explain a bad one.
type owner struct {
	ref metav1.OwnerReference
	// namespace is the owner object's namespace ("" when unknown or
	// cluster-scoped): owner references do not cross namespaces.
	namespace string
	// problem, when set, reports why no usable reference could be made (a
	// nil owner, an owner of unknown kind) at the reference's path.
	problem func(ref *field.Path) *field.Error
}

// New starts metadata for an object called name.
func New(name string) *Builder { return &Builder{name: name} }

// GenerateName starts metadata for an object whose name the API server
// generates: prefix followed by five random characters.
func GenerateName(prefix string) *Builder { return &Builder{generateName: prefix} }

// Clone returns an independent copy of the Builder: changing one never
// changes the other.
func (b *Builder) Clone() *Builder {
	c := *b
	c.labels = maps.Clone(b.labels)
	c.annotations = maps.Clone(b.annotations)
	c.finalizers = slices.Clone(b.finalizers)
	c.owners = make([]owner, len(b.owners))
	for i, o := range b.owners {
		c.owners[i] = o
		c.owners[i].ref = *o.ref.DeepCopy()
	}
	return &c
}

// NameRule sets the format the kind requires of metadata.name (and of the
// generateName prefix). The default is [DNS1123Subdomain].
func (b *Builder) NameRule(r NameRule) *Builder { b.nameRule = r; return b }

// Namespace sets metadata.namespace.
func (b *Builder) Namespace(ns string) *Builder { b.namespace = ns; return b }

// Label sets one label, replacing an earlier value for the same key.
func (b *Builder) Label(key, value string) *Builder {
	if b.labels == nil {
		b.labels = map[string]string{}
	}
	b.labels[key] = value
	return b
}

// Labels sets several labels, keeping the ones set before (a key given
// again takes the new value). The map is copied.
func (b *Builder) Labels(labels map[string]string) *Builder {
	for k, v := range labels {
		b.Label(k, v)
	}
	return b
}

// Annotation sets one annotation, replacing an earlier value for the same
// key.
func (b *Builder) Annotation(key, value string) *Builder {
	if b.annotations == nil {
		b.annotations = map[string]string{}
	}
	b.annotations[key] = value
	return b
}

// Annotations sets several annotations, keeping the ones set before (a key
// given again takes the new value). The map is copied.
func (b *Builder) Annotations(annotations map[string]string) *Builder {
	for k, v := range annotations {
		b.Annotation(k, v)
	}
	return b
}

// Finalizer adds a finalizer; adding the same one twice keeps one. Names
// must be domain-qualified ("example.com/cleanup"); see the package
// documentation for why.
func (b *Builder) Finalizer(name string) *Builder {
	if !slices.Contains(b.finalizers, name) {
		b.finalizers = append(b.finalizers, name)
	}
	return b
}

// OwnerReference adds ref as given (it is copied). A reference with the UID
// of one added before replaces it, except that a controller reference stays
// a controller reference.
func (b *Builder) OwnerReference(ref metav1.OwnerReference) *Builder {
	b.addOwner(owner{ref: *ref.DeepCopy()})
	return b
}

// Owner adds a reference to owner, an object of kind gvk. A typed object
// read through a client has an empty TypeMeta, so the caller names its kind:
// myv1.GroupVersion.WithKind("MyKind"). An empty gvk falls back to the
// owner's TypeMeta (set on unstructured objects); if that is empty too, the
// terminal methods report the missing kind. Adding the same owner (by UID)
// again replaces the earlier reference, never demoting a controller.
func (b *Builder) Owner(owner client.Object, gvk schema.GroupVersionKind) *Builder {
	b.addOwner(ownerOf(owner, gvk, false, "Owner"))
	return b
}

// ControlledBy adds a controller reference to owner, an object of kind gvk,
// with controller and blockOwnerDeletion set, as a controller does for the
// objects it creates. gvk works as in [Builder.Owner]. An object has at most
// one controller: a second, different controller is reported by the
// terminal methods, naming both.
func (b *Builder) ControlledBy(owner client.Object, gvk schema.GroupVersionKind) *Builder {
	b.addOwner(ownerOf(owner, gvk, true, "ControlledBy"))
	return b
}

// ownerOf makes the reference to o; method names the Builder method for the
// error message.
func ownerOf(o client.Object, gvk schema.GroupVersionKind, controller bool, method string) owner {
	if isNil(o) {
		return owner{problem: func(p *field.Path) *field.Error {
			return field.Required(p, "the owner passed to "+method+" is nil")
		}}
	}
	if gvk.Empty() {
		gvk = o.GetObjectKind().GroupVersionKind()
	}
	ref := metav1.OwnerReference{
		APIVersion: gvk.GroupVersion().String(),
		Kind:       gvk.Kind,
		Name:       o.GetName(),
		UID:        o.GetUID(),
	}
	if controller {
		ref.Controller, ref.BlockOwnerDeletion = new(true), new(true)
	}
	ow := owner{ref: ref, namespace: o.GetNamespace()}
	if gvk.Empty() {
		name := o.GetName()
		ow.problem = func(p *field.Path) *field.Error {
			return field.Required(p.Child("kind"), "the kind of owner "+strconv.Quote(name)+" is unknown: pass its GroupVersionKind to "+
				method+" (a typed object read through a client has an empty TypeMeta)")
		}
	}
	return ow
}

// isNil reports a nil interface or a nil pointer in a non-nil interface,
// either of which would panic on the first method call.
func isNil(o client.Object) bool {
	if o == nil {
		return true
	}
	switch v := reflect.ValueOf(o); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// addOwner appends o, or puts it in place of the owner with the same UID.
func (b *Builder) addOwner(o owner) {
	if o.ref.UID != "" {
		for i := range b.owners {
			if b.owners[i].ref.UID == o.ref.UID {
				o.ref = mergeRef(b.owners[i].ref, o.ref)
				b.owners[i] = o
				return
			}
		}
	}
	b.owners = append(b.owners, o)
}

// mergeRef returns next in place of prev, a reference to the same owner:
// controller and blockOwnerDeletion, once true, stay true, so adding an owner
// again never demotes its controller reference.
func mergeRef(prev, next metav1.OwnerReference) metav1.OwnerReference {
	out := *next.DeepCopy()
	if isTrue(prev.Controller) && !isTrue(out.Controller) {
		out.Controller = new(true)
	}
	if isTrue(prev.BlockOwnerDeletion) && !isTrue(out.BlockOwnerDeletion) {
		out.BlockOwnerDeletion = new(true)
	}
	return out
}

func isTrue(b *bool) bool { return b != nil && *b }

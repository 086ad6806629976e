package meta

import (
	"maps"
	"slices"
	"strconv"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/internal/ownerref"
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
	nameRule                      apivalidation.ValidateNameFunc
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

// NameRule sets the function that checks metadata.name (and the
// generateName prefix) for the kind the metadata is for; the Builder cannot
// know the kind, the API server picks the rule per kind. It takes the API
// server's own functions (apivalidation is
// k8s.io/apimachinery/pkg/api/validation):
//
//   - apivalidation.NameIsDNSSubdomain, the default (nil selects it too):
//     most kinds (ConfigMap, Secret, Deployment, custom resources);
//   - apivalidation.NameIsDNSLabel: Namespace, and names that become DNS
//     labels or label values;
//   - apivalidation.NameIsDNS1035Label: Service;
//   - the RBAC kinds, whose names are often like "example.com:manager":
//     func(name string, _ bool) []string { return content.IsPathSegmentName(name) }
//     (content is k8s.io/apimachinery/pkg/api/validate/content), what the API
//     server runs for them, a generateName prefix checked as a whole name.
func (b *Builder) NameRule(rule apivalidation.ValidateNameFunc) *Builder { b.nameRule = rule; return b }

// Namespace sets metadata.namespace.
func (b *Builder) Namespace(ns string) *Builder { b.namespace = ns; return b }

// Labels sets labels, keeping the ones set before (a key given again takes
// the new value). The map is copied.
func (b *Builder) Labels(labels map[string]string) *Builder {
	b.labels = setAll(b.labels, labels)
	return b
}

// Annotations sets annotations, keeping the ones set before (a key given
// again takes the new value). The map is copied.
func (b *Builder) Annotations(annotations map[string]string) *Builder {
	b.annotations = setAll(b.annotations, annotations)
	return b
}

// setAll copies add into m, making m when needed.
func setAll(m, add map[string]string) map[string]string {
	if m == nil && len(add) > 0 {
		m = make(map[string]string, len(add))
	}
	maps.Copy(m, add)
	return m
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

// Owner adds an owner reference to owner. Its kind comes from scheme, as
// in the owners package and controllerutil (a reconciler has the manager's
// scheme); with a nil scheme, from owner's TypeMeta (set on unstructured
// objects, empty on a typed object read through a client). Adding the same
// owner (same group, kind and name) again replaces the earlier reference,
// never demoting a controller.
func (b *Builder) Owner(owner client.Object, scheme *runtime.Scheme) *Builder {
	b.addOwner(ownerOf(owner, scheme, false, "Owner"))
	return b
}

// ControlledBy adds a controller reference to owner, with controller and
// blockOwnerDeletion set, as a controller does for the objects it creates;
// scheme works as in [Builder.Owner]. An object has at most one
// controller: a second, different controller is reported by the terminal
// methods, naming both.
func (b *Builder) ControlledBy(owner client.Object, scheme *runtime.Scheme) *Builder {
	b.addOwner(ownerOf(owner, scheme, true, "ControlledBy"))
	return b
}

// ownerOf makes the reference to o; method names the Builder method for the
// error message.
func ownerOf(o client.Object, scheme *runtime.Scheme, controller bool, method string) owner {
	if ownerref.IsNil(o) {
		return owner{problem: func(p *field.Path) *field.Error {
			return field.Required(p, "the owner passed to "+method+" is nil")
		}}
	}
	gvk, err := ownerref.KindOf(o, scheme)
	ow := owner{ref: ownerref.For(o, gvk, controller), namespace: o.GetNamespace()}
	if err != nil {
		name := o.GetName()
		ow.problem = func(p *field.Path) *field.Error {
			return field.Required(p.Child("kind"), "owner "+strconv.Quote(name)+" passed to "+method+": "+err.Error())
		}
	}
	return ow
}

// addOwner appends o, or puts it in place of the owner that is the same
// object (see ownerref.Merge).
func (b *Builder) addOwner(o owner) {
	if o.problem == nil {
		for i := range b.owners {
			if b.owners[i].problem == nil && ownerref.SameObject(b.owners[i].ref, o.ref) {
				merged, _ := ownerref.Merge([]metav1.OwnerReference{b.owners[i].ref}, o.ref)
				o.ref = merged[0]
				b.owners[i] = o
				return
			}
		}
	}
	b.owners = append(b.owners, o)
}

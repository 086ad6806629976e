package meta

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// target is what is already on the object the metadata goes onto. The zero
// target is a new object ([Builder.Build], [Builder.ApplyConfiguration]).
type target struct {
	name, generateName, namespace string
	annotations                   map[string]string
	finalizers                    []string
	ownerRefs                     []metav1.OwnerReference
}

// standardFinalizers are Kubernetes' own finalizers, the only names without
// a domain the API server accepts silently.
var standardFinalizers = []string{"kubernetes", metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents}

var metadata = field.NewPath("metadata")

// validate returns every problem with the Builder's metadata as it would
// land on t. It checks what the Builder contributes, never what t already
// holds: an object read from the server passed the server's checks, and it
// may carry another controller's finalizer that this package would refuse.
// Paths index the merged lists, as they will be on the object.
func (b *Builder) validate(t target) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, b.validateNames(t)...)
	errs = append(errs, validateLabels(b.labels)...)
	errs = append(errs, validateAnnotations(b.annotations, t.annotations)...)
	errs = append(errs, validateFinalizers(t.finalizers, b.finalizers)...)
	ns := cmp.Or(b.namespace, t.namespace)
	errs = append(errs, validateOwners(t.ownerRefs, b.owners, ns)...)
	return errs
}

func (b *Builder) validateNames(t target) field.ErrorList {
	var errs field.ErrorList
	name := metadata.Child("name")
	if b.name != "" {
		for _, msg := range b.nameRule.check(b.name, false) {
			errs = append(errs, field.Invalid(name, b.name, msg))
		}
		if t.name != "" && t.name != b.name {
			errs = append(errs, field.Invalid(name, b.name, fmt.Sprintf("the object is already named %q", t.name)))
		}
	} else if b.generateName == "" && t.name == "" && t.generateName == "" {
		errs = append(errs, field.Required(name, "name or generateName is required"))
	}
	if b.generateName != "" {
		for _, msg := range b.nameRule.check(b.generateName, true) {
			errs = append(errs, field.Invalid(metadata.Child("generateName"), b.generateName, msg))
		}
	}
	if b.namespace != "" {
		p := metadata.Child("namespace")
		for _, msg := range apivalidation.ValidateNamespaceName(b.namespace, false) {
			errs = append(errs, field.Invalid(p, b.namespace, msg))
		}
		if t.namespace != "" && t.namespace != b.namespace {
			errs = append(errs, field.Invalid(p, b.namespace, fmt.Sprintf("the object is already in namespace %q", t.namespace)))
		}
	}
	return errs
}

// key is the path of a map entry, the key quoted.
func key(p *field.Path, k string) *field.Path { return p.Key(strconv.Quote(k)) }

func validateLabels(labels map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		p := key(metadata.Child("labels"), k)
		for _, msg := range content.IsLabelKey(k) {
			errs = append(errs, field.Invalid(p, k, msg))
		}
		for _, msg := range content.IsLabelValue(labels[k]) {
			errs = append(errs, field.Invalid(p, labels[k], msg))
		}
	}
	return errs
}

// validateAnnotations checks the keys added and, as the API server does, the
// total size of the keys and values the object will have.
func validateAnnotations(add, existing map[string]string) field.ErrorList {
	if len(add) == 0 {
		return nil
	}
	var errs field.ErrorList
	p := metadata.Child("annotations")
	for _, k := range slices.Sorted(maps.Keys(add)) {
		// A qualified name (the label key format), case ignored as the API
		// server ignores it.
		for _, msg := range content.IsLabelKey(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(key(p, k), k, msg))
		}
	}
	size := 0
	for k, v := range mergeMaps(existing, add) {
		size += len(k) + len(v)
	}
	if limit := apivalidation.TotalAnnotationSizeLimitB; size > limit {
		errs = append(errs, &field.Error{
			Type: field.ErrorTypeTooLong, Field: p.String(), BadValue: size,
			Detail: fmt.Sprintf("keys and values total %d bytes, more than the limit of %d", size, limit),
		})
	}
	return errs
}

// validateFinalizers checks the finalizers added, at the index each will
// have on the object.
func validateFinalizers(existing, add []string) field.ErrorList {
	var errs field.ErrorList
	p := metadata.Child("finalizers")
	merged, at := mergeFinalizers(existing, add)
	for i, f := range add {
		ip := p.Index(at[i])
		for _, msg := range content.IsLabelKey(f) { // a qualified name
			errs = append(errs, field.Invalid(ip, f, msg))
		}
		// The API server only warns about a finalizer without a domain (and
		// rejects it on core kinds). Two controllers that pick the same bare
		// word remove each other's finalizer and run cleanup too early.
		if !strings.Contains(f, "/") && !slices.Contains(standardFinalizers, f) {
			errs = append(errs, field.Invalid(ip, f,
				fmt.Sprintf(`must be domain-qualified, like "example.com/%s", so that no other controller's finalizer has the same name`, f)))
		}
	}
	orphan, foreground := metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents
	if (slices.Contains(add, orphan) || slices.Contains(add, foreground)) &&
		slices.Contains(merged, orphan) && slices.Contains(merged, foreground) {
		errs = append(errs, field.Invalid(p, merged, fmt.Sprintf("%s and %s cannot both be set", orphan, foreground)))
	}
	return errs
}

// validateOwners checks the owner references added, at the index each will
// have on the object, and that at most one reference is a controller.
// namespace is the object's, "" when it has none (yet).
func validateOwners(existing []metav1.OwnerReference, add []owner, namespace string) field.ErrorList {
	var errs field.ErrorList
	p := metadata.Child("ownerReferences")
	merged, at := mergeOwnerRefs(existing, add)
	added := make(map[int]bool, len(add))
	for i, o := range add {
		added[at[i]] = true
		ip := p.Index(at[i])
		if o.problem != nil {
			errs = append(errs, o.problem(ip))
			continue
		}
		errs = append(errs, validateOwnerRef(ip, o.ref)...)
		if o.namespace != "" && o.namespace != namespace {
			detail := fmt.Sprintf("owner %s is in namespace %q, the object in %q: owner references do not cross namespaces",
				describe(o.ref), o.namespace, namespace)
			if namespace == "" {
				detail = fmt.Sprintf("owner %s is in namespace %q and the object has none: set its namespace (a cluster-scoped object cannot have a namespaced owner)",
					describe(o.ref), o.namespace)
			}
			errs = append(errs, field.Invalid(ip, o.namespace, detail))
		}
	}
	first := -1
	for i, ref := range merged {
		if !isTrue(ref.Controller) {
			continue
		}
		if first < 0 {
			first = i
			continue
		}
		if added[i] || added[first] {
			errs = append(errs, field.Invalid(p.Index(i).Child("controller"), true,
				fmt.Sprintf("%s cannot be a second controller: %s is already the controller", describe(ref), describe(merged[first]))))
		}
	}
	return errs
}

func validateOwnerRef(p *field.Path, ref metav1.OwnerReference) field.ErrorList {
	var errs field.ErrorList
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	switch {
	case ref.APIVersion == "":
		errs = append(errs, field.Required(p.Child("apiVersion"), "the owner's API version, like apps/v1"))
	case err != nil || gv.Version == "":
		errs = append(errs, field.Invalid(p.Child("apiVersion"), ref.APIVersion, "must be <group>/<version> or <version>"))
	}
	if ref.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), "the owner's kind"))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "the owner's name"))
	}
	if ref.UID == "" {
		errs = append(errs, field.Required(p.Child("uid"),
			fmt.Sprintf("owner %s has no UID: it must be read from or created on the server first", describe(ref))))
	}
	if _, banned := apivalidation.BannedOwners[gv.WithKind(ref.Kind)]; banned && err == nil {
		errs = append(errs, field.Invalid(p.Child("kind"), ref.Kind, fmt.Sprintf("%s %s cannot be an owner", ref.APIVersion, ref.Kind)))
	}
	return errs
}

// describe names an owner in messages: Deployment "web".
func describe(ref metav1.OwnerReference) string {
	kind := ref.Kind
	if kind == "" {
		kind = "owner"
	}
	return kind + " " + strconv.Quote(ref.Name)
}

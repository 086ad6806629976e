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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kopgo/kopgo/internal/ownerref"
)

// target is what is already on the object the metadata goes onto. The zero
// target is a new object ([Builder.Build], [Builder.ApplyConfiguration]).
type target struct {
	name, generateName, namespace string
	uid                           types.UID
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
	errs = append(errs, validateOwners(t.ownerRefs, b.owners, ownerref.Child{Namespace: ns, UID: t.uid})...)
	return errs
}

func (b *Builder) validateNames(t target) field.ErrorList {
	var errs field.ErrorList
	name := metadata.Child("name")
	if b.name != "" {
		for _, msg := range b.checkName(b.name, false) {
			errs = append(errs, field.Invalid(name, b.name, msg))
		}
		if t.name != "" && t.name != b.name {
			errs = append(errs, field.Invalid(name, b.name, fmt.Sprintf("the object is already named %q", t.name)))
		}
	} else if b.generateName == "" && t.name == "" && t.generateName == "" {
		errs = append(errs, field.Required(name, "name or generateName is required"))
	}
	if b.generateName != "" {
		for _, msg := range b.checkName(b.generateName, true) {
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

// checkName returns what is wrong with a name (prefix: a generateName
// prefix) under the Builder's rule, DNS-1123 subdomain by default.
func (b *Builder) checkName(name string, prefix bool) []string {
	if b.nameRule == nil {
		return apivalidation.NameIsDNSSubdomain(name, prefix)
	}
	return b.nameRule(name, prefix)
}

// validateOwners checks the owner references added, at the index each will
// have on the object, and that at most one reference is a controller: the
// rules of package internal/ownerref, which the owners package applies too.
func validateOwners(existing []metav1.OwnerReference, add []owner, child ownerref.Child) field.ErrorList {
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
		errs = append(errs, ownerref.Check(ip, o.ref, o.namespace, child)...)
	}
	return append(errs, ownerref.Controllers(p, merged, func(i int) bool { return added[i] })...)
}

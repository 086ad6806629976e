package meta

import (
	"fmt"
	"sort"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidationError lists every problem with the metadata, each with its field
// path (metadata.labels["app"]) and the offending value.
type ValidationError struct {
	// Fields are the problems, sorted by field path.
	Fields field.ErrorList
}

// Error renders every problem, separated by "; ".
func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		msgs[i] = f.Error()
	}
	return "invalid metadata: " + strings.Join(msgs, "; ")
}

// maxGeneratedSuffix is the length of the suffix the API server appends to
// generateName.
const maxGeneratedSuffix = 5

func (b *Builder) validate() error {
	md := field.NewPath("metadata")
	var errs field.ErrorList
	switch {
	case b.name == "" && b.generateName == "":
		errs = append(errs, field.Required(md.Child("name"), "name or generateName is required"))
	case b.name != "":
		errs = append(errs, nameErrors(md.Child("name"), b.name, b.nameRule)...)
	default:
		// The server appends a random suffix; the prefix plus suffix must be a name.
		errs = append(errs, nameErrors(md.Child("generateName"), b.generateName+strings.Repeat("x", maxGeneratedSuffix), b.nameRule)...)
	}
	if b.namespace != "" {
		for _, msg := range validation.IsDNS1123Label(b.namespace) {
			errs = append(errs, field.Invalid(md.Child("namespace"), b.namespace, msg))
		}
	}
	errs = append(errs, metav1validation.ValidateLabels(b.labels, md.Child("labels"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(b.annotations, md.Child("annotations"))...)
	for i, f := range b.finalizers {
		p := md.Child("finalizers").Index(i)
		for _, msg := range validation.IsQualifiedName(f) {
			errs = append(errs, field.Invalid(p, f, msg))
		}
		// The API server accepts a finalizer without a domain with only a
		// warning; two controllers picking the same bare word would each
		// remove the other's. Require the domain.
		if !strings.Contains(f, "/") {
			errs = append(errs, field.Invalid(p, f, "must be domain-qualified, e.g. example.com/"+f))
		}
	}
	errs = append(errs, ownerErrors(md.Child("ownerReferences"), b.owners)...)
	if len(errs) == 0 {
		return nil
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	return &ValidationError{Fields: errs}
}

func nameErrors(p *field.Path, name string, rule NameRule) field.ErrorList {
	check := validation.IsDNS1123Subdomain
	if rule == DNS1123Label {
		check = validation.IsDNS1123Label
	}
	var errs field.ErrorList
	for _, msg := range check(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

func ownerErrors(p *field.Path, owners []owner) field.ErrorList {
	var errs field.ErrorList
	var controller *metav1.OwnerReference
	for i, o := range owners {
		ip := p.Index(i)
		ref := o.ref
		if o.missing != "" {
			errs = append(errs, field.Required(ip.Child("kind"), fmt.Sprintf("owner %q has no TypeMeta: pass its GroupVersionKind", o.missing)))
		} else if ref.Kind == "" {
			errs = append(errs, field.Required(ip.Child("kind"), ""))
		}
		if ref.APIVersion == "" || ref.APIVersion == "v0" {
			errs = append(errs, field.Required(ip.Child("apiVersion"), ""))
		}
		if ref.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		if ref.UID == "" {
			errs = append(errs, field.Required(ip.Child("uid"), fmt.Sprintf("owner %s %q has no UID: create it first", ref.Kind, ref.Name)))
		}
		if ref.Controller != nil && *ref.Controller {
			if controller != nil {
				errs = append(errs, field.Invalid(ip.Child("controller"), true,
					fmt.Sprintf("%s %q is already the controller; %s %q cannot be a second one", controller.Kind, controller.Name, ref.Kind, ref.Name)))
			} else {
				controller = &owners[i].ref
			}
		}
	}
	return errs
}

package echoserver

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kopgo/kopgo/examples/echoserver/api/v1alpha1"
)

// validate checks what the CRD's schema cannot: that the EchoServer's name,
// which names its children and labels its pods, is usable as a Service's
// name (a DNS-1035 label: at most 63 characters, lower case letters, digits
// and '-', starting with a letter, no dots; Kubernetes 1.36 and later also
// take a leading digit, older API servers do not), and that the message
// holds no character server-side apply cannot carry. The schema's own
// checks (message, replicas, port) are repeated so that an EchoServer
// stored before the schema had them still gets a clear answer rather than
// a refused apply. Each problem names its field, e.g.
// `metadata.name: Invalid value: "a.b": ...`.
func validate(es *v1alpha1.EchoServer) field.ErrorList {
	var errs field.ErrorList
	name := field.NewPath("metadata", "name")
	for _, msg := range validation.IsDNS1035Label(es.Name) {
		errs = append(errs, field.Invalid(name, es.Name, "names the Service, so it must be a DNS-1035 label: "+msg))
	}
	spec := field.NewPath("spec")
	if es.Spec.Message == "" {
		errs = append(errs, field.Required(spec.Child("message"), "the text the server answers with"))
	}
	if r, bad := notApplicable(es.Spec.Message); bad {
		errs = append(errs, field.Invalid(spec.Child("message"), "<value omitted>",
			fmt.Sprintf("contains %U, a control character that server-side apply cannot carry", r)))
	}
	if r := es.Spec.Replicas; r != nil && *r < 0 {
		errs = append(errs, field.Invalid(spec.Child("replicas"), *r, "must not be negative"))
	}
	if p := es.Spec.Port; p != 0 {
		for _, msg := range validation.IsValidPortNum(int(p)) {
			errs = append(errs, field.Invalid(spec.Child("port"), p, msg))
		}
	}
	return errs
}

// notApplicable returns the first character of s that server-side apply
// cannot carry, if any. The API server reads an apply request as YAML
// (application/apply-patch+yaml), and JSON leaves DEL, the C1 control
// characters, U+FFFE and U+FFFF unescaped. YAML forbids all of them but
// NEL: a Deployment whose arguments hold one is refused ("yaml: control
// characters are not allowed") however often it is applied. NEL (U+0085)
// it reads as a line break, so that it arrives as a space or a newline.
func notApplicable(s string) (rune, bool) {
	for _, r := range s {
		if (r >= 0x7f && r <= 0x9f) || r == 0xfffe || r == 0xffff {
			return r, true
		}
	}
	return 0, false
}

package operator

import (
	"fmt"
	"regexp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/kopgo/kopgo/examples/webapp/api/v1alpha1"
)

// imageRef is the grammar of a container image reference (the "reference"
// grammar of the distribution project): [host[:port]/]path[:tag][@digest],
// path components lower case.
var imageRef = func() *regexp.Regexp {
	const (
		hostPart  = `(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)`
		host      = hostPart + `(?:\.` + hostPart + `)*(?::[0-9]+)?`
		component = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`
		path      = component + `(?:/` + component + `)*`
		tag       = `[\w][\w.-]{0,127}`
		digest    = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
	)
	return regexp.MustCompile(`^(?:` + host + `/)?` + path + `(?::` + tag + `)?(?:@` + digest + `)?$`)
}()

// maxConfigBytes is the most a ConfigMap's values may hold in total (the API
// server's limit, corev1.MaxSecretSize: 1 MiB).
const maxConfigBytes = corev1.MaxSecretSize

// validate checks what the CRD's schema cannot: the syntax of the image
// reference, that the name is usable for the children (a label value and a
// Service name), and that the config fits a ConfigMap, its keys become
// environment variables, and server-side apply can carry its values. Each
// problem names its field, e.g. `spec.image: Invalid value: "nginx:::"`.
func validate(app *webappv1.WebApp) field.ErrorList {
	var errs field.ErrorList
	// The API server accepts any DNS subdomain (253 characters, dots) as a
	// WebApp's name; the Service it names must be a DNS-1035 label, which
	// is also a valid label value (the instance label carries the name).
	// Since Kubernetes 1.36 (RelaxedServiceNameValidation) a Service's
	// name may also start with a digit; the older rule holds everywhere.
	name := field.NewPath("metadata", "name")
	for _, msg := range validation.IsDNS1035Label(app.Name) {
		errs = append(errs, field.Invalid(name, app.Name,
			fmt.Sprintf("names the Service and is the value of label %s, so it must be a DNS-1035 label: %s", InstanceLabel, msg)))
	}
	spec := field.NewPath("spec")
	if !imageRef.MatchString(app.Spec.Image) {
		errs = append(errs, field.Invalid(spec.Child("image"), app.Spec.Image,
			"not a container image reference ([registry/]name[:tag][@digest], name in lower case)"))
	}
	if p := app.Spec.Port; p != 0 && (p < 1 || p > 65535) {
		// The schema says the same; a WebApp stored before the schema did
		// still gets a clear answer.
		errs = append(errs, field.Invalid(spec.Child("port"), p, "must be between 1 and 65535"))
	}
	if r := app.Spec.Replicas; r != nil && *r < 0 {
		errs = append(errs, field.Invalid(spec.Child("replicas"), *r, "must not be negative"))
	}
	keys := make([]string, 0, len(app.Spec.Config))
	size := 0
	for k, v := range app.Spec.Config {
		keys = append(keys, k)
		size += len(v)
	}
	slices.Sort(keys)
	for _, k := range keys {
		path := spec.Child("config").Key(k)
		envMsgs := validation.IsEnvVarName(k)
		for _, msg := range envMsgs {
			errs = append(errs, field.Invalid(path, k, "not an environment variable name: "+msg))
		}
		if len(envMsgs) == 0 {
			// An environment variable name can still be no ConfigMap key:
			// too long, or "." or "..".
			for _, msg := range validation.IsConfigMapKey(k) {
				errs = append(errs, field.Invalid(path, k, "not a ConfigMap key: "+msg))
			}
		}
		if r, bad := notApplicable(app.Spec.Config[k]); bad {
			errs = append(errs, field.Invalid(path, "<value omitted>",
				fmt.Sprintf("contains %U, a control character that server-side apply cannot carry", r)))
		}
	}
	if size > maxConfigBytes {
		tooLong := field.TooLong(spec.Child("config"), "", maxConfigBytes)
		tooLong.Detail = fmt.Sprintf("values total %d bytes, more than a ConfigMap holds (%d)", size, maxConfigBytes)
		errs = append(errs, tooLong)
	}
	return errs
}

// notApplicable returns the first character of s that server-side apply
// cannot carry, if any. The API server reads an apply request as YAML
// (application/apply-patch+yaml), and JSON leaves DEL, the C1 control
// characters, U+FFFE and U+FFFF unescaped. YAML forbids all of them but
// NEL: a child holding one is refused ("yaml: control characters are not
// allowed") however often it is applied. NEL (U+0085) it reads as a line
// break, so that it arrives as a space or a newline.
func notApplicable(s string) (rune, bool) {
	for _, r := range s {
		if (r >= 0x7f && r <= 0x9f) || r == 0xfffe || r == 0xffff {
			return r, true
		}
	}
	return 0, false
}

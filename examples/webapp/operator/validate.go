package operator

import (
	"fmt"
	"regexp"
	"slices"

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

// validate checks what the CRD's schema cannot: the syntax of the image
// reference and of the config keys (they become environment variables).
// Each problem names its field, e.g. `spec.image: Invalid value: "nginx:::"`.
func validate(app *webappv1.WebApp) field.ErrorList {
	var errs field.ErrorList
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
	keys := make([]string, 0, len(app.Spec.Config))
	for k := range app.Spec.Config {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, msg := range validation.IsEnvVarName(k) {
			errs = append(errs, field.Invalid(spec.Child("config").Key(k), k, fmt.Sprintf("not an environment variable name: %s", msg)))
		}
	}
	return errs
}

package controller

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubebuilderv1 "github.com/kopgo/kopgo/examples/kubebuilder/api/v1"
)

// maxDataBytes is the most an entry's values may hold in total: what a
// ConfigMap holds (the API server's limit, corev1.MaxSecretSize, 1 MiB).
const maxDataBytes = corev1.MaxSecretSize

// validate returns what is wrong with cs that makes its ConfigMaps
// impossible, each error naming its field ("spec.configs[0].data[a=b]:
// Invalid value: ..."). Retrying cannot fix any of it: the reconciler
// reports them Stalled until the spec changes.
//
// The CRD's schema refuses bad entry names and data keys when a ConfigSet
// is written; validate checks them again for ConfigSets stored before the
// schema did. What the schema cannot say, validate alone checks: a name
// too long for a label value, values over a ConfigMap's 1 MiB in total (a
// ConfigSet may hold more), and characters in values that server-side
// apply cannot carry (checking those in CEL costs more than the API server
// allows for values of that size).
func validate(cs *kubebuilderv1.ConfigSet) field.ErrorList {
	var errs field.ErrorList
	// The API server accepts any DNS subdomain (253 characters) as a
	// name; the ConfigMaps carry it as a label value (63).
	for _, msg := range validation.IsValidLabelValue(cs.Name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), cs.Name,
			fmt.Sprintf("is the value of label %s on the ConfigMaps: %s", ConfigSetLabel, msg)))
	}
	configs := field.NewPath("spec", "configs")
	seen := make(map[string]bool, len(cs.Spec.Configs))
	for i, entry := range cs.Spec.Configs {
		path := configs.Index(i)
		for _, msg := range validation.IsDNS1123Label(entry.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), entry.Name, msg))
		}
		if seen[entry.Name] {
			errs = append(errs, field.Duplicate(path.Child("name"), entry.Name))
		}
		seen[entry.Name] = true
		errs = append(errs, validateData(entry.Data, path.Child("data"))...)
	}
	return errs
}

// validateData checks one entry's data: ConfigMap keys, values that
// server-side apply carries unchanged, at most maxDataBytes in total.
func validateData(data map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	keys := make([]string, 0, len(data))
	size := 0
	for k, v := range data {
		keys = append(keys, k)
		size += len(v)
	}
	slices.Sort(keys) // the same message for the same spec
	for _, k := range keys {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(path.Key(k), k, "not a ConfigMap key: "+msg))
		}
		if r, bad := notApplicable(data[k]); bad {
			errs = append(errs, field.Invalid(path.Key(k), "<value omitted>",
				fmt.Sprintf("contains %U, a control character that server-side apply cannot carry", r)))
		}
	}
	if size > maxDataBytes {
		tooLong := field.TooLong(path, "", maxDataBytes)
		tooLong.Detail = fmt.Sprintf("values total %d bytes, more than a ConfigMap holds (%d)", size, maxDataBytes)
		errs = append(errs, tooLong)
	}
	return errs
}

// notApplicable returns the first character of s that server-side apply
// cannot carry, if any. The API server reads an apply request as YAML
// (application/apply-patch+yaml), and JSON leaves DEL, the C1 control
// characters, U+FFFE and U+FFFF unescaped. YAML forbids all of them but
// NEL: a ConfigMap holding one is refused ("yaml: control characters are
// not allowed") however often it is applied. NEL (U+0085) it reads as a
// line break, so that the ConfigMap would silently hold a space instead.
func notApplicable(s string) (rune, bool) {
	for _, r := range s {
		if (r >= 0x7f && r <= 0x9f) || r == 0xfffe || r == 0xffff {
			return r, true
		}
	}
	return 0, false
}

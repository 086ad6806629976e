package database

import (
	"maps"
	"slices"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kopgo/kopgo/examples/database/api/v1alpha1"
)

// MaxNameLength is the longest Database name: the StatefulSet of that name
// labels its pods with "<name>-<revision hash>" (a label value, at most 63
// characters, the hash up to 10 and a dash), and the Job "<name>-migrate"
// labels its pod with its own name.
const MaxNameLength = 52

// validate checks what the CRD's schema cannot: that the name can name the
// children (a Service's name is a DNS-1035 label; see MaxNameLength), and
// that the migration pod's labels and annotations are valid and leave the
// operator's own labels alone. Each problem names its field, e.g.
// `metadata.name: Invalid value: "a.b": ...`.
func validate(db *v1alpha1.Database) field.ErrorList {
	var errs field.ErrorList
	name := field.NewPath("metadata", "name")
	for _, msg := range validation.IsDNS1035Label(db.Name) {
		errs = append(errs, field.Invalid(name, db.Name, "names the headless Service, so it must be a DNS-1035 label: "+msg))
	}
	if len(db.Name) > MaxNameLength {
		errs = append(errs, field.TooLong(name, db.Name, MaxNameLength))
	}
	mig := field.NewPath("spec", "migration")
	errs = append(errs, metav1validation.ValidateLabels(db.Spec.Migration.PodLabels, mig.Child("podLabels"))...)
	ours := slices.Sorted(maps.Keys(labels(db)))
	ours = append(ours, "app.kubernetes.io/component")
	for _, k := range slices.Sorted(maps.Keys(db.Spec.Migration.PodLabels)) {
		if slices.Contains(ours, k) {
			errs = append(errs, field.Forbidden(mig.Child("podLabels").Key(k),
				"the operator sets this label itself: "+strings.Join(ours, ", ")))
		}
	}
	errs = append(errs, apivalidation.ValidateAnnotations(db.Spec.Migration.PodAnnotations, mig.Child("podAnnotations"))...)
	return errs
}

package reconciler

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

func TestImmutable(t *testing.T) {
	gk := schema.GroupKind{Group: "batch", Kind: "Job"}
	invalid := func(errs ...*field.Error) error {
		return koperrors.Wrap(apierrors.NewInvalid(gk, "j", errs), "apply", kopmeta.ObjectRef{})
	}
	tmpl := field.NewPath("spec", "template")
	tests := []struct {
		name   string
		err    error
		want   bool
		causes string
	}{
		{"job template", invalid(field.Invalid(tmpl, "a long pod template", "field is immutable")), true, "spec.template: field is immutable"},
		{"service clusterIP", invalid(field.Invalid(field.NewPath("spec", "clusterIPs").Index(0), []string{"None"}, "may not change once set")), true, "spec.clusterIPs[0]: may not change once set"},
		{"statefulset", invalid(field.Forbidden(field.NewPath("spec"), "updates to statefulset spec for fields other than 'replicas' are forbidden")), true, ""},
		{"immutable and invalid", invalid(field.Invalid(tmpl, "x", "field is immutable"), field.Invalid(field.NewPath("spec", "port"), 70000, "must be between 1 and 65535")), false, ""},
		{"invalid only", invalid(field.Invalid(field.NewPath("spec", "port"), 70000, "must be between 1 and 65535")), false, ""},
		{"conflict", apierrors.NewConflict(schema.GroupResource{Resource: "jobs"}, "j", errors.New("field is immutable")), false, ""},
		{"plain", errors.New("field is immutable"), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := immutable(tt.err); got != tt.want {
				t.Errorf("immutable(%v) = %v, want %v", tt.err, got, tt.want)
			}
			if tt.causes != "" {
				if got := immutableCauses(tt.err); got != tt.causes {
					t.Errorf("immutableCauses = %q, want %q", got, tt.causes)
				}
			}
		})
	}
}

func TestCutNote(t *testing.T) {
	var refs []string
	for range 100 {
		refs = append(refs, "ConfigMap some-namespace/some-child-name")
	}
	note := cutNote("created " + strings.Join(refs, ", "))
	if len(note) > maxNote || !strings.HasSuffix(note, "some-child-name and more") {
		t.Errorf("cutNote = %d bytes ending %q, want at most %d ending at a child and \" and more\"", len(note), note[len(note)-40:], maxNote)
	}
	if short := "created ConfigMap ns/a"; cutNote(short) != short {
		t.Errorf("cutNote changed a short note: %q", cutNote(short))
	}
}

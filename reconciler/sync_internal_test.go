package reconciler

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// The Adapter gives a Syncer a finalizer only when usesFinalizer says so.
func TestSyncerUsesFinalizerOnlyWithFinalize(t *testing.T) {
	without := Sync[*corev1.ConfigMap](nil, nil)
	with := Sync[*corev1.ConfigMap](nil, nil, WithFinalize(func(context.Context, *corev1.ConfigMap, Children) error { return nil }))
	if without.usesFinalizer() || !with.usesFinalizer() {
		t.Errorf("usesFinalizer: without WithFinalize %v, with %v; want false, true", without.usesFinalizer(), with.usesFinalizer())
	}
}

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

// Conditions the sync function sets are its own; otherwise the held ones
// come back where they were.
func TestHeldConditions(t *testing.T) {
	ts := metav1.Unix(1000, 0)
	before := []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Old", LastTransitionTime: ts},
		{Type: "Custom", Status: metav1.ConditionTrue, Reason: "X", LastTransitionTime: ts},
	}
	obj := &condObj{conds: append([]metav1.Condition(nil), before...)}
	h := holdConditions(obj)
	if len(obj.conds) != 1 || obj.conds[0].Type != "Custom" {
		t.Fatalf("held: %v, want only Custom left", obj.conds)
	}
	obj.conds[0].Reason = "Changed"
	if h.release(obj) {
		t.Error("release reported conditions set by the sync function")
	}
	if len(obj.conds) != 2 || obj.conds[0].Type != "Ready" || obj.conds[0].Reason != "Old" || obj.conds[1].Reason != "Changed" {
		t.Errorf("released: %v, want Ready (as held) then Custom (as changed)", obj.conds)
	}

	h = holdConditions(obj)
	obj.conds = append(obj.conds, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Mine", LastTransitionTime: metav1.Unix(2000, 0)})
	if !h.release(obj) {
		t.Error("release missed the Ready the sync function set")
	}
	if r := find(obj.conds, "Ready"); r == nil || r.Reason != "Mine" || !r.LastTransitionTime.Equal(&ts) {
		t.Errorf("Ready = %+v, want the sync function's, with the unchanged status' transition time", r)
	}
}

type condObj struct {
	corev1.ConfigMap
	conds []metav1.Condition
}

func (c *condObj) GetConditions() []metav1.Condition   { return c.conds }
func (c *condObj) SetConditions(cs []metav1.Condition) { c.conds = cs }

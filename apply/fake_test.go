package apply_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
)

// The Fake's default outcomes follow the Applier's: Created the first
// time, Unchanged for the same intent as the same owner, Updated for another
// intent, owner or Force; a dry run and Forget leave nothing behind.
func TestFakeOutcomes(t *testing.T) {
	f := &apply.Fake{}
	steps := []struct {
		name   string
		data   map[string]string
		opts   []client.ApplyOption
		forget bool
		want   apply.Outcome
	}{
		{"first", map[string]string{"k": "v"}, nil, false, apply.Created},
		{"same again", map[string]string{"k": "v"}, nil, false, apply.Unchanged},
		{"not forced explicitly: the default", map[string]string{"k": "v"}, []client.ApplyOption{apply.Force(false)}, false, apply.Unchanged},
		{"forced", map[string]string{"k": "v"}, []client.ApplyOption{client.ForceOwnership}, false, apply.Updated},
		{"another owner", map[string]string{"k": "v"}, []client.ApplyOption{client.FieldOwner("other")}, false, apply.Updated},
		{"changed data", map[string]string{"k": "w"}, nil, false, apply.Updated},
		{"dry run of other data", map[string]string{"k": "x"}, []client.ApplyOption{client.DryRunAll}, false, apply.Updated},
		{"not remembered after the dry run", map[string]string{"k": "w"}, nil, false, apply.Unchanged},
		{"after Forget", map[string]string{"k": "w"}, nil, true, apply.Created},
	}
	for _, s := range steps {
		if s.forget {
			f.Forget(cmKey("ns", "cm"))
		}
		res, err := f.Apply(t.Context(), configMapAC("ns", "cm", s.data), s.opts...)
		if err != nil || res.Outcome != s.want || res.Requests != 0 {
			t.Errorf("%s: Apply = %s (%d requests), %v; want %s", s.name, res.Outcome, res.Requests, err, s.want)
		}
		if got := res.Object().Object["data"]; !cmp.Equal(got, toAny(s.data)) {
			t.Errorf("%s: Object().data = %v, want %v", s.name, got, s.data)
		}
	}
	if n := len(f.Applied()); n != len(steps) {
		t.Errorf("Applied has %d objects, want %d", n, len(steps))
	}
	if f.FieldOwner() != "fake-controller" {
		t.Errorf("FieldOwner = %q", f.FieldOwner())
	}
}

// Respond sees the options over the defaults, sets the outcome, may change
// the object Result.Object returns, and fails the apply with its error
// wrapped as the Applier wraps the server's. Bad input is refused first.
func TestFakeRespondAndErrors(t *testing.T) {
	var seen []client.ApplyOptions
	f := &apply.Fake{Owner: "web-controller", Respond: func(obj *unstructured.Unstructured, opts *client.ApplyOptions) (apply.Outcome, error) {
		seen = append(seen, *opts)
		if obj.GetName() == "denied" {
			return 0, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "denied", errors.New("no"))
		}
		_ = unstructured.SetNestedField(obj.Object, "set by Respond", "data", "extra")
		return apply.Updated, nil
	}}
	res, err := f.Apply(t.Context(), configMapAC("ns", "cm", nil), apply.Force(false))
	if err != nil || res.Outcome != apply.Updated || res.Object().Object["data"].(map[string]any)["extra"] != "set by Respond" {
		t.Errorf("Apply = %s, %v, object %v", res.Outcome, err, res.Object())
	}
	if len(seen) != 1 || seen[0].FieldManager != "web-controller" || seen[0].Force == nil || *seen[0].Force {
		t.Errorf("Respond saw %+v, want web-controller, not forced", seen)
	}
	_, err = f.Apply(t.Context(), configMapAC("ns", "denied", nil))
	if koperrors.KindOf(err) != koperrors.Forbidden || err.Error() != `apply ConfigMap ns/denied: configmaps "denied" is forbidden: no` {
		t.Errorf("denied apply = %v (kind %s)", err, koperrors.KindOf(err))
	}
	for _, bad := range []any{configMapAC("ns", "", nil), 42} {
		if _, err := f.Apply(t.Context(), bad); koperrors.KindOf(err) != koperrors.Invalid {
			t.Errorf("Apply(%v) = %v, want Kind Invalid", bad, err)
		}
	}
	if _, err := f.Apply(t.Context(), configMapAC("ns", "cm", nil), client.FieldOwner("")); koperrors.KindOf(err) != koperrors.Invalid {
		t.Errorf("empty field owner = %v, want Kind Invalid", err)
	}
	if n := len(f.Applied()); n != 2 {
		t.Errorf("Applied has %d objects, want 2 (bad input is not recorded)", n)
	}
}

func toAny(m map[string]string) any {
	if m == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

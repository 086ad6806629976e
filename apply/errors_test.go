package apply_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
)

// By default (not forced), a field another manager owns is a Conflict
// naming that manager and the field, and nothing changes: an object someone
// else created first is never taken over; with Force(true) the field is ours.
func TestConflictAndForce(t *testing.T) {
	ns := cluster.Namespace(t)
	a, _ := newApplier(t)
	if err := cluster.Client().Apply(t.Context(), configMapAC(ns, "cm", map[string]string{"k": "theirs"}), client.FieldOwner("other-manager")); err != nil {
		t.Fatal(err)
	}
	_, err := a.Apply(t.Context(), configMapAC(ns, "cm", map[string]string{"k": "ours"})) // the default
	if koperrors.KindOf(err) != koperrors.Invalid {
		t.Fatalf("conflicting apply = %v, want Kind Invalid", err)
	}
	for _, want := range []string{"apply ConfigMap " + ns + "/cm", "other-manager", ".data.k", "Force"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if diff := cmp.Diff([]apply.FieldConflict{{Manager: "other-manager", Field: ".data.k"}}, apply.Conflicts(err)); diff != "" {
		t.Errorf("Conflicts (-want +got):\n%s", diff)
	}
	if got := getData(t, ns, "cm")["k"]; got != "theirs" {
		t.Errorf("data.k = %q after a refused apply", got)
	}
	res, err := a.Apply(t.Context(), configMapAC(ns, "cm", map[string]string{"k": "ours"}), apply.Force(true))
	if err != nil || res.Outcome != apply.Updated {
		t.Errorf("forced apply = %s, %v; want Updated", res.Outcome, err)
	}
	if got := getData(t, ns, "cm")["k"]; got != "ours" {
		t.Errorf("data.k = %q after a forced apply", got)
	}
	// The other manager now conflicts with us: per-call FieldOwner.
	_, err = a.Apply(t.Context(), configMapAC(ns, "cm", map[string]string{"k": "theirs"}), client.FieldOwner("other-manager"))
	if diff := cmp.Diff([]apply.FieldConflict{{Manager: owner, Field: ".data.k"}}, apply.Conflicts(err)); diff != "" {
		t.Errorf("Conflicts as other-manager (-want +got):\n%s", diff)
	}
}

// Problems visible locally are Invalid errors naming the object and the
// field, and send no apply request.
func TestBadInputSendsNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	a, requests := newApplier(t)
	noKind := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "namespace": ns}}}
	unknown := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget"}}
	unknown.SetName("w")
	unknown.SetNamespace(ns)
	tests := []struct {
		name string
		obj  any
		opts []client.ApplyOption
		want []string
	}{
		{"no name", configMapAC(ns, "", nil), nil, []string{"apply ConfigMap " + ns + "/", "metadata.name is required"}},
		{"no kind", noKind, nil, []string{ns + "/x", "apiVersion and kind are required"}},
		{"unknown kind", unknown, nil, []string{"apply Widget " + ns + "/w", "apiVersion/kind", "example.com/v1, Kind=Widget is not served"}},
		{"no namespace", configMapAC("", "cm", nil), nil, []string{"apply ConfigMap cm", "metadata.namespace is required: ConfigMap is namespaced"}},
		{"namespace on cluster kind", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns}}, nil,
			[]string{"apply Namespace " + ns + "/x", `metadata.namespace "` + ns + `" must be empty: Namespace is cluster-scoped`}},
		{"empty field owner", configMapAC(ns, "cm", nil), []client.ApplyOption{client.FieldOwner("")}, []string{"field owner is empty"}},
		{"not an object", 42, nil, []string{"cannot apply a int"}},
		{"nil object", (*corev1.ConfigMap)(nil), nil, []string{"cannot apply a nil *v1.ConfigMap"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := requests.patches.Load()
			res, err := a.Apply(t.Context(), tt.obj, tt.opts...)
			if koperrors.KindOf(err) != koperrors.Invalid {
				t.Fatalf("Apply = %v, want Kind Invalid", err)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if n := requests.patches.Load() - before; n != 0 || res.Requests != 0 {
				t.Errorf("%d apply requests sent (reported %d)", n, res.Requests)
			}
		})
	}
	// Only the unknown kind needed the server (discovery); nothing else was
	// sent at all.
	if n := requests.all.Load(); n > 3 {
		t.Errorf("%d requests for bad input, want only the unknown kind's discovery", n)
	}
	if _, err := apply.New(cluster.Config, ""); koperrors.KindOf(err) != koperrors.Config {
		t.Errorf("New without field owner = %v, want Kind Config", err)
	}
}

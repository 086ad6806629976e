package crdtest_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopgo/kopgo/crdtest"
)

// gizmoCRD reads testdata/gizmos.yaml.
func gizmoCRD(t testing.TB) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crds, err := crdtest.ReadCRDs("testdata/gizmos.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != 1 {
		t.Fatalf("testdata/gizmos.yaml: %d CustomResourceDefinitions, want 1", len(crds))
	}
	return crds[0]
}

func gizmoValidator(t testing.TB) *crdtest.Validator {
	t.Helper()
	v, err := crdtest.NewValidator(gizmoCRD(t), "v1")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// gizmo is a Gizmo named g with spec.
func gizmo(spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "crdtest.kopgo.dev/v1",
		"kind":       "Gizmo",
		"metadata":   map[string]any{"name": "g", "namespace": "default"},
		"spec":       spec,
	}}
}

func TestValidate(t *testing.T) {
	v := gizmoValidator(t)
	tests := []struct {
		name string
		spec map[string]any
		want []string
	}{
		{name: "valid", spec: map[string]any{"image": "nginx:1.27", "replicas": int64(1)}},
		{name: "unknown field pruned", spec: map[string]any{"image": "nginx", "replicas": int64(1), "color": "red"}},
		{
			name: "required",
			spec: map[string]any{"replicas": int64(1)},
			want: []string{
				`spec.image: Required value`,
				`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
			},
		},
		{
			name: "pattern and enum",
			spec: map[string]any{"image": "NGINX", "replicas": int64(1), "mode": "Slow"},
			want: []string{
				`spec.image: Invalid value: "NGINX": spec.image in body should match '^[a-z0-9./-]+(:[a-z0-9.-]+)?$'`,
				`spec.mode: Unsupported value: "Slow": supported values: "Fast", "Safe"`,
				`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
			},
		},
		{
			name: "format",
			spec: map[string]any{"image": "nginx", "replicas": int64(1), "owner": "nobody"},
			want: []string{
				`spec.owner: Invalid value: "nobody": spec.owner in body must be of type email: "nobody"`,
				`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
			},
		},
		{
			name: "rule with fieldPath and reason",
			spec: map[string]any{"image": "nginx", "replicas": int64(1), "minReplicas": int64(2)},
			want: []string{`spec.minReplicas: Forbidden: minReplicas must not exceed replicas`},
		},
		{
			name: "messageExpression",
			spec: map[string]any{"image": "nginx", "replicas": int64(1), "mode": "Safe"},
			want: []string{`spec: Invalid value: mode Safe needs at least 2 replicas`},
		},
		{
			name: "list rules",
			spec: map[string]any{"image": "nginx", "replicas": int64(1), "ports": []any{
				map[string]any{"name": "ssh", "port": int64(22)},
			}, "tags": []any{"Blue"}},
			want: []string{
				`spec.ports: Invalid value: port 22 is reserved`,
				`spec.tags: Invalid value: tags must be lower case`,
			},
		},
		{
			name: "list-type map keys",
			spec: map[string]any{"image": "nginx", "replicas": int64(1), "ports": []any{
				map[string]any{"name": "http", "port": int64(80)},
				map[string]any{"name": "http", "port": int64(8080)},
			}},
			want: []string{
				`spec.ports[1]: Duplicate value: {"name":"http"}`,
				`spec.ports: Invalid value: at most one http port`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, err := range v.Validate(t.Context(), gizmo(tt.spec)) {
				got = append(got, err.Error())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate(%v) (-want +got):\n%s", tt.spec, diff)
			}
		})
	}
}

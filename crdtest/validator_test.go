package crdtest_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/kopgo/kopgo/crdtest"
	webappv1alpha1 "github.com/kopgo/kopgo/examples/webapp/api/v1alpha1"
)

// gizmoCRD reads testdata/gizmos.yaml.
func gizmoCRD(tb testing.TB) *apiextensionsv1.CustomResourceDefinition {
	tb.Helper()
	crds, err := crdtest.ReadCRDs("testdata/gizmos.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	if len(crds) != 1 {
		tb.Fatalf("testdata/gizmos.yaml: %d CustomResourceDefinitions, want 1", len(crds))
	}
	return crds[0]
}

func gizmoValidator(tb testing.TB) *crdtest.Validator {
	tb.Helper()
	v, err := crdtest.NewValidator(gizmoCRD(tb), "v1")
	if err != nil {
		tb.Fatal(err)
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

func TestValidateUpdate(t *testing.T) {
	v := gizmoValidator(t)
	tests := []struct {
		name     string
		old, new map[string]any
		want     []string
	}{
		{
			name: "unchanged",
			old:  map[string]any{"image": "nginx", "replicas": int64(1)},
			new:  map[string]any{"image": "nginx", "replicas": int64(1)},
		},
		{
			name: "transition rule on a field",
			old:  map[string]any{"image": "nginx", "replicas": int64(2), "mode": "Safe"},
			new:  map[string]any{"image": "nginx", "replicas": int64(2), "mode": "Fast"},
			want: []string{`spec.mode: Invalid value: "Fast": mode is immutable`},
		},
		{
			name: "a default is applied before the transition rule",
			old:  map[string]any{"image": "nginx", "replicas": int64(2), "mode": "Safe"},
			new:  map[string]any{"image": "nginx", "replicas": int64(2)},
			want: []string{`spec.mode: Invalid value: "Fast": mode is immutable`},
		},
		{
			name: "transition rule on an object",
			old:  map[string]any{"image": "nginx", "replicas": int64(2)},
			new:  map[string]any{"image": "nginx", "replicas": int64(5)},
			want: []string{`spec: Invalid value: replicas may at most double in one update`},
		},
		{
			name: "ratcheting: an invalid value left unchanged",
			old:  map[string]any{"image": "nginx", "replicas": int64(1), "tags": []any{"Blue"}, "owner": "nobody"},
			new:  map[string]any{"image": "nginx:1.27", "replicas": int64(2), "tags": []any{"Blue"}, "owner": "nobody"},
		},
		{
			name: "ratcheting: an invalid value changed",
			old:  map[string]any{"image": "nginx", "replicas": int64(1), "tags": []any{"Blue"}},
			new:  map[string]any{"image": "nginx", "replicas": int64(1), "tags": []any{"Red"}},
			want: []string{`spec.tags: Invalid value: tags must be lower case`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := gizmo(tt.old)
			old.SetResourceVersion("1")
			old.SetUID("4f2c7c9e-6c1b-4d0e-8a51-0e9b7a3f2d11")
			obj := old.DeepCopy()
			obj.Object["spec"] = tt.new
			var got []string
			for _, err := range v.ValidateUpdate(t.Context(), obj, old) {
				got = append(got, err.Error())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate(%v, %v) (-want +got):\n%s", tt.new, tt.old, diff)
			}
		})
	}
}

func TestNewValidator(t *testing.T) {
	crd := gizmoCRD(t)
	tests := []struct {
		name    string
		version string
		mutate  func(*apiextensionsv1.CustomResourceDefinition)
		want    string
	}{
		{name: "served version", version: "v1"},
		{name: "unknown version", version: "v2", want: `new validator: CustomResourceDefinition gizmos.crdtest.kopgo.dev has no version "v2"`},
		{
			name: "rule that does not compile", version: "v1",
			mutate: func(crd *apiextensionsv1.CustomResourceDefinition) {
				spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
				spec.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.nope > 1"}}
				crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
			},
			want: "new validator: the API server would refuse CustomResourceDefinition gizmos.crdtest.kopgo.dev: " +
				"spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: " +
				`{"Rule":"self.nope \u003e 1","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: ` +
				"compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope > 1\n | ....^",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd := crd.DeepCopy()
			if tt.mutate != nil {
				tt.mutate(crd)
			}
			_, err := crdtest.NewValidator(crd, tt.version)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("NewValidator error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateTyped validates typed objects (the Go types of
// examples/webapp, with no TypeMeta set) against the CRD controller-gen
// generated from them.
func TestValidateTyped(t *testing.T) {
	crds, err := crdtest.ReadCRDs("../examples/webapp/config/crd")
	if err != nil {
		t.Fatal(err)
	}
	v, err := crdtest.NewValidator(crds[0], "v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		spec webappv1alpha1.WebAppSpec
		want []string
	}{
		{name: "valid", spec: webappv1alpha1.WebAppSpec{Image: "nginx:1.27", Replicas: ptr.To[int32](2)}},
		{
			name: "invalid",
			spec: webappv1alpha1.WebAppSpec{Replicas: ptr.To[int32](101), Port: 70000},
			want: []string{
				`spec.image: Invalid value: "": spec.image in body should be at least 1 chars long`,
				`spec.port: Invalid value: 70000: spec.port in body should be less than or equal to 65535`,
				`spec.replicas: Invalid value: 101: spec.replicas in body should be less than or equal to 100`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := &webappv1alpha1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: tt.spec}
			var got []string
			for _, err := range v.Validate(t.Context(), app) {
				got = append(got, err.Error())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

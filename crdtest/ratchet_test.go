package crdtest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/crdtest"
)

// ratchetCRD is the Ratchet CRD, loose (no rules) or strict: lower-case
// tags of at most 5 characters, an email owner, a rule on the spec.
func ratchetCRD(strict bool) *apiextensionsv1.CustomResourceDefinition {
	tag := apiextensionsv1.JSONSchemaProps{Type: "string"}
	tags := apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &tag}}
	owner := apiextensionsv1.JSONSchemaProps{Type: "string"}
	spec := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"replicas": {Type: "integer"},
		"limit":    {Type: "integer"},
	}}
	if strict {
		tag.MaxLength = ptr.To[int64](5)
		tags.MaxItems = ptr.To[int64](4)
		tags.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.all(t, t.lowerAscii() == t)", Message: "tags must be lower case"}}
		owner.Format = "email"
		spec.XValidations = apiextensionsv1.ValidationRules{{Rule: "!has(self.limit) || self.replicas <= self.limit", Message: "replicas must not exceed limit"}}
	}
	tags.Items.Schema = &tag
	spec.Properties["tags"] = tags
	spec.Properties["owner"] = owner
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "ratchets.crdtest.kopgo.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "crdtest.kopgo.dev",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "ratchets", Singular: "ratchet", Kind: "Ratchet", ListKind: "RatchetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": spec},
				}},
			}},
		},
	}
}

func ratchet(ns, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "crdtest.kopgo.dev/v1", "kind": "Ratchet",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
}

// TestRatchetingAgreesWithAPIServer creates objects under a loose CRD,
// tightens it (the objects become invalid), and updates them: the API
// server accepts an update that leaves the invalid values as they were
// (ratcheting) and refuses one that changes them, and so does the offline
// validator of the tightened CRD, with the same message and causes.
func TestRatchetingAgreesWithAPIServer(t *testing.T) {
	c := cluster.Client()
	ns := cluster.Namespace(t)
	crd := ratchetCRD(false)
	if err := c.Create(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), crd); err != nil {
			t.Error(err)
		}
	})
	invalid := map[string]any{"replicas": int64(5), "limit": int64(3), "tags": []any{"Blue", "toolong"}, "owner": "nobody"}
	tests := []struct {
		name   string
		update func(spec map[string]any)
	}{
		{name: "a valid field changed", update: func(s map[string]any) { s["tags"] = []any{"Blue", "toolong"} }},
		{name: "an unknown field added", update: func(s map[string]any) { s["color"] = "red" }},
		{name: "nothing changed", update: func(map[string]any) {}},
		{name: "an invalid tag changed", update: func(s map[string]any) { s["tags"] = []any{"Red", "toolong"} }},
		{name: "a valid tag added", update: func(s map[string]any) { s["tags"] = []any{"Blue", "toolong", "ok"} }},
		{name: "owner changed, still invalid", update: func(s map[string]any) { s["owner"] = "somebody" }},
		{name: "owner fixed", update: func(s map[string]any) { s["owner"] = "dev@example.com" }},
		{name: "replicas changed, the rule still broken", update: func(s map[string]any) { s["replicas"] = int64(6) }},
		{name: "limit raised, the rule kept", update: func(s map[string]any) { s["limit"] = int64(10) }},
	}
	stored := map[string]*unstructured.Unstructured{}
	for i, tt := range tests {
		obj := ratchet(ns, fmt.Sprintf("r-%d", i), invalid)
		// The first create waits for the new kind to be served.
		var err error
		werr := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			err = c.Create(ctx, obj)
			return !apimeta.IsNoMatchError(err) && !apierrors.IsNotFound(err), nil
		})
		if err = errors.Join(werr, err); err != nil {
			t.Fatal(err)
		}
		stored[tt.name] = obj
	}

	// Tighten the CRD, and wait until the API server enforces it.
	strict := ratchetCRD(true)
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(crd), crd); err != nil {
		t.Fatal(err)
	}
	crd.Spec = strict.Spec
	if err := c.Update(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.Create(ctx, ratchet(ns, "probe", map[string]any{"owner": "nobody"}), client.DryRunAll)
		return err != nil, nil
	})
	if err != nil {
		t.Fatalf("the API server did not enforce the tightened CRD: %v", err)
	}

	v, err := crdtest.NewValidator(strict, "v1")
	if err != nil {
		t.Fatal(err)
	}
	gk := v.GroupVersionKind().GroupKind()
	accepted := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := stored[tt.name]
			obj := old.DeepCopy()
			spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
			tt.update(spec)
			obj.Object["spec"] = spec
			errs := v.ValidateUpdate(t.Context(), obj, old)
			server := serverVerdict(t, c.Update(t.Context(), obj.DeepCopy()))
			offline := offlineVerdict(gk, obj.GetName(), inServerOrder(server, errs))
			if diff := cmp.Diff(server, offline); diff != "" {
				t.Errorf("the offline verdict differs from the API server's (-server +offline):\n%s", diff)
			}
			if server.Accepted {
				accepted++
			}
		})
	}
	t.Logf("%d updates of objects made invalid by the tightened CRD: %d accepted (ratcheted) and %d refused by the API server", len(tests), accepted, len(tests)-accepted)
	if accepted == 0 || accepted == len(tests) {
		t.Errorf("%d of %d updates accepted: the cases do not test ratcheting both ways", accepted, len(tests))
	}
}

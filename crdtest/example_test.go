package crdtest_test

import (
	"context"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kopgo/kopgo/crdtest"
)

// A CRD whose spec.replicas has bounds and a transition rule, and whose
// spec has a rule across two fields.
func exampleCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "pools.example.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.dev",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "pools", Singular: "pool", Kind: "Pool", ListKind: "PoolList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {
						Type:     "object",
						Required: []string{"replicas"},
						Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"replicas": {Type: "integer", Minimum: new(0.0), Maximum: new(50.0), XValidations: apiextensionsv1.ValidationRules{
								{Rule: "self >= oldSelf", Message: "replicas may not decrease"},
							}},
							"maxSurge": {Type: "integer"},
						},
						XValidations: apiextensionsv1.ValidationRules{
							{Rule: "!has(self.maxSurge) || self.maxSurge <= self.replicas", Message: "maxSurge must not exceed replicas", FieldPath: ".maxSurge"},
						},
					}},
				}},
			}},
		},
	}
}

func pool(spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.dev/v1", "kind": "Pool",
		"metadata": map[string]any{"name": "p", "namespace": "default"},
		"spec":     spec,
	}}
}

func ExampleValidator() {
	v, err := crdtest.NewValidator(exampleCRD(), "v1")
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()

	fmt.Println("create:", v.Validate(ctx, pool(map[string]any{"replicas": int64(3)})))
	fmt.Println("create:", v.Validate(ctx, pool(map[string]any{"replicas": int64(3), "maxSurge": int64(5)})))
	fmt.Println("create:", v.Validate(ctx, pool(map[string]any{"replicas": int64(60)})))

	stored := pool(map[string]any{"replicas": int64(3)})
	stored.SetResourceVersion("1") // as read from the API server
	changed := stored.DeepCopy()
	changed.Object["spec"] = map[string]any{"replicas": int64(2)}
	fmt.Println("update:", v.ValidateUpdate(ctx, changed, stored))
	// Output:
	// create: []
	// create: [spec.maxSurge: Invalid value: maxSurge must not exceed replicas]
	// create: [spec.replicas: Invalid value: 60: spec.replicas in body should be less than or equal to 50]
	// update: [spec.replicas: Invalid value: 2: replicas may not decrease]
}

func ExampleCheckCRD() {
	crd := exampleCRD()
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	// Unbounded tags, compared pairwise: the server estimates the cost
	// with the longest list of the longest strings it could be sent.
	spec.Properties["tags"] = apiextensionsv1.JSONSchemaProps{
		Type:  "array",
		Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}},
		XValidations: apiextensionsv1.ValidationRules{
			{Rule: "self.all(x, self.all(y, x == y || !x.contains(y)))", Message: "no tag may contain another"},
		},
	}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec

	for _, err := range crdtest.CheckCRD(context.Background(), crd) {
		fmt.Println(err.Field)
		fmt.Println("  ", err.Detail)
	}
	// Output:
	// spec.validation.openAPIV3Schema.properties[spec].properties[tags].x-kubernetes-validations[0].rule
	//    estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)
	// spec.validation.openAPIV3Schema.properties[spec].properties[tags].x-kubernetes-validations[0].rule
	//    contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema
	// spec.validation.openAPIV3Schema
	//    x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)
}

// printer is a crdtest.TB that prints the first line of each failure; a
// test passes its *testing.T.
type printer struct{}

func (printer) Helper() {}
func (printer) Errorf(format string, args ...any) {
	fmt.Println(strings.SplitN(fmt.Sprintf(format, args...), "\n", 2)[0])
}

func ExampleCheckRoundTrip() {
	// WidgetV1 is the hub; WidgetV1alpha1 keeps v1's tolerations in an
	// annotation, WidgetLossy drops them (roundtrip_test.go).
	crdtest.CheckRoundTrip(printer{}, &WidgetV1{}, []conversion.Convertible{&WidgetV1alpha1{}, &WidgetLossy{}}, crdtest.Iterations(1000))
	// Output:
	// crdtest_test.WidgetV1 -> crdtest_test.WidgetLossy -> crdtest_test.WidgetV1: iteration 2 (seed 1): Spec.Tolerations lost in the round trip (-want +got):
}

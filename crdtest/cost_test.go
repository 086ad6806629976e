package crdtest_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kopgo/kopgo/crdtest"
)

// costlyCRD is a CRD of kind Costly with the given plural, whose spec has
// one property, prop.
func costlyCRD(plural string, prop apiextensionsv1.JSONSchemaProps) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".crdtest.kopgo.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "crdtest.kopgo.dev",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: "Costly", ListKind: "CostlyList", Singular: "costly"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"prop": prop}},
					},
				}},
			}},
		},
	}
}

// stringList is a list of strings, bounded or not, with rules.
func stringList(maxItems, maxLength *int64, rules ...apiextensionsv1.ValidationRule) apiextensionsv1.JSONSchemaProps {
	return apiextensionsv1.JSONSchemaProps{
		Type: "array", MaxItems: maxItems,
		Items:        &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: maxLength}},
		XValidations: rules,
	}
}

// costCases are CRDs whose rules' estimated cost is within the API
// server's limits or not, with the errors CheckCRD returns for them.
func costCases() []costCase {
	pairs := apiextensionsv1.ValidationRule{Rule: "self.all(x, self.all(y, x == y || !x.contains(y)))", Message: "no tag may contain another"}
	return []costCase{
		{
			name: "bounded",
			crd:  costlyCRD("boundeds", stringList(ptr.To[int64](10), ptr.To[int64](20), pairs)),
		},
		{
			name: "unbounded",
			crd:  costlyCRD("unboundeds", stringList(nil, nil, pairs)),
			want: []string{
				"spec.validation.openAPIV3Schema.properties[spec].properties[prop].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
				"spec.validation.openAPIV3Schema.properties[spec].properties[prop].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
				"spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
			},
		},
		{
			name: "bounded, but many",
			crd:  costlyCRD("manies", stringList(ptr.To[int64](1000), ptr.To[int64](100), pairs)),
			want: []string{
				"spec.validation.openAPIV3Schema.properties[spec].properties[prop].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
				"spec.validation.openAPIV3Schema.properties[spec].properties[prop].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
				"spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 16.5x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
			},
		},
		{
			name: "an integer in a messageExpression",
			crd: costlyCRD("messages", apiextensionsv1.JSONSchemaProps{Type: "integer", XValidations: []apiextensionsv1.ValidationRule{{
				Rule: "self >= 0", MessageExpression: "'must not be negative, not ' + string(self)",
			}}}),
			want: []string{
				"spec.validation.openAPIV3Schema.properties[spec].properties[prop].x-kubernetes-validations[0].messageExpression: Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
				"spec.validation.openAPIV3Schema.properties[spec].properties[prop].x-kubernetes-validations[0].messageExpression: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
				"spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
			},
		},
	}
}

type costCase struct {
	name string
	crd  *apiextensionsv1.CustomResourceDefinition
	want []string
}

func TestCheckCRDCost(t *testing.T) {
	for _, tt := range costCases() {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, err := range crdtest.CheckCRD(t.Context(), tt.crd) {
				got = append(got, err.Error())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CheckCRD (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckCRDAgreesWithAPIServer creates the CRDs of costCases on the
// real API server: it refuses those CheckCRD refuses, with the same
// message and causes.
func TestCheckCRDAgreesWithAPIServer(t *testing.T) {
	gk := apiextensionsv1.Kind("CustomResourceDefinition")
	for _, tt := range costCases() {
		t.Run(tt.name, func(t *testing.T) {
			offline := offlineVerdict(gk, tt.crd.Name, crdtest.CheckCRD(t.Context(), tt.crd))
			crd := tt.crd.DeepCopy()
			err := cluster.Client().Create(t.Context(), crd)
			if err == nil {
				t.Cleanup(func() {
					if err := cluster.Client().Delete(context.Background(), crd); err != nil {
						t.Error(err)
					}
				})
			}
			if diff := cmp.Diff(serverVerdict(t, err), offline); diff != "" {
				t.Errorf("the offline verdict on CustomResourceDefinition %s differs from the API server's (-server +offline):\n%s", crd.Name, diff)
			}
			if offline.Accepted != (len(tt.want) == 0) {
				t.Errorf("CheckCRD accepted=%v, want %v", offline.Accepted, len(tt.want) == 0)
			}
		})
	}
}

// TestCheckCRDUpdate updates CRDs that an earlier server, which
// estimated less, accepted: the server (1.37) does not refuse a version
// whose schema is unchanged for the cost of one rule, but does for the
// total of the schema, and for any rule once the schema changes.
func TestCheckCRDUpdate(t *testing.T) {
	pairs := apiextensionsv1.ValidationRule{Rule: "self.all(x, self.all(y, x == y || !x.contains(y)))", Message: "no tag may contain another"}
	overRule := costlyCRD("overs", stringList(ptr.To[int64](100), ptr.To[int64](100), pairs)) // 1.6x the limit of a rule
	overTotal := costlyCRD("totals", stringList(nil, nil, pairs))                             // over both limits
	label := func(crd *apiextensionsv1.CustomResourceDefinition) { crd.Labels = map[string]string{"a": "b"} }
	addProperty := func(crd *apiextensionsv1.CustomResourceDefinition) {
		crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["other"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	}
	tests := []struct {
		name    string
		old     *apiextensionsv1.CustomResourceDefinition
		mutate  func(*apiextensionsv1.CustomResourceDefinition)
		refused bool
	}{
		{name: "over a rule's limit, schema unchanged", old: overRule, mutate: label},
		{name: "over a rule's limit, schema changed", old: overRule, mutate: addProperty, refused: true},
		{name: "over the total limit, schema unchanged", old: overTotal, mutate: label, refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := tt.old.DeepCopy()
			old.ResourceVersion = "1" // as read from the API server
			crd := old.DeepCopy()
			tt.mutate(crd)
			errs := crdtest.CheckCRDUpdate(t.Context(), crd, old)
			if got := len(errs) > 0; got != tt.refused {
				t.Errorf("CheckCRDUpdate refused=%v, want %v: %v", got, tt.refused, errs)
			}
			if errs := crdtest.CheckCRD(t.Context(), crd); len(errs) == 0 {
				t.Errorf("CheckCRD accepted a CRD with a rule over its cost limit")
			}
		})
	}
}

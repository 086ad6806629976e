package versioned

import (
	"context"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is the Gadget API group.
const Group = "versioned.test.kopgo.dev"

// V1 and V2 are Gadget's versions; V1 is the hub and the storage version.
var (
	V1 = schema.GroupVersion{Group: Group, Version: "v1"}
	V2 = schema.GroupVersion{Group: Group, Version: "v2"}
)

// Gadget is the v1 (hub) version.
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired state.
	Spec GadgetSpec `json:"spec,omitempty"`
}

// GadgetSpec is v1's desired state.
type GadgetSpec struct {
	// Size is a number: defaulted and validated by tests' webhooks.
	Size int64 `json:"size,omitempty"`
	// Message is any text.
	Message string `json:"message,omitempty"`
}

// GadgetV2 is the v2 (spoke) version: spec.size is spec.count there.
type GadgetV2 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired state.
	Spec GadgetV2Spec `json:"spec,omitempty"`
}

// GadgetV2Spec is v2's desired state.
type GadgetV2Spec struct {
	// Count is v1's Size.
	Count int64 `json:"count,omitempty"`
	// Message is any text.
	Message string `json:"message,omitempty"`
}

// GadgetList is a list of v1 Gadgets.
type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Gadgets.
	Items []Gadget `json:"items"`
}

// GadgetV2List is a list of v2 Gadgets.
type GadgetV2List struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Gadgets.
	Items []GadgetV2 `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (g *Gadget) DeepCopyObject() runtime.Object {
	out := *g
	g.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// DeepCopyObject implements runtime.Object.
func (g *GadgetV2) DeepCopyObject() runtime.Object {
	out := *g
	g.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// DeepCopyObject implements runtime.Object.
func (l *GadgetList) DeepCopyObject() runtime.Object {
	out := &GadgetList{TypeMeta: l.TypeMeta}
	l.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopyObject().(*Gadget))
	}
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *GadgetV2List) DeepCopyObject() runtime.Object {
	out := &GadgetV2List{TypeMeta: l.TypeMeta}
	l.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopyObject().(*GadgetV2))
	}
	return out
}

// AddToScheme registers both versions of Gadget and their lists.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(V1, &Gadget{}, &GadgetList{})
	s.AddKnownTypeWithName(V2.WithKind("Gadget"), &GadgetV2{})
	s.AddKnownTypeWithName(V2.WithKind("GadgetList"), &GadgetV2List{})
	metav1.AddToGroupVersion(s, V1)
	metav1.AddToGroupVersion(s, V2)
	return nil
}

// ConvertV1ToV2 converts the hub to v2 (hub to spoke).
func ConvertV1ToV2(_ context.Context, src *Gadget, dst *GadgetV2) error {
	src.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = GadgetV2Spec{Count: src.Spec.Size, Message: src.Spec.Message}
	return nil
}

// ConvertV2ToV1 converts v2 to the hub (spoke to hub).
func ConvertV2ToV1(_ context.Context, src *GadgetV2, dst *Gadget) error {
	src.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = GadgetSpec{Size: src.Spec.Count, Message: src.Spec.Message}
	return nil
}

// CRD is the Gadget CustomResourceDefinition: namespaced, v1 (storage)
// and v2 served, conversion strategy None.
func CRD() *apiextensionsv1.CustomResourceDefinition {
	version := func(name string, storage bool, sizeField string) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{
			Name: name, Served: true, Storage: storage,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						sizeField: {Type: "integer"}, "message": {Type: "string"},
					}},
				},
			}},
		}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets." + Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: Group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				version(V1.Version, true, "size"), version(V2.Version, false, "count"),
			},
		},
	}
}

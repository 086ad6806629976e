package status_test

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Widget is a small custom resource for the tests: a spec, a status with a
// scalar, observedGeneration and conditions.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec   `json:"spec,omitempty"`
	Status            WidgetStatus `json:"status,omitempty"`
}

type WidgetSpec struct {
	Size int64 `json:"size,omitempty"`
}

type WidgetStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Phase              string             `json:"phase,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

func (w *Widget) GetConditions() []metav1.Condition  { return w.Status.Conditions }
func (w *Widget) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }
func (w *Widget) GetObservedGeneration() int64       { return w.Status.ObservedGeneration }
func (w *Widget) SetObservedGeneration(g int64)      { w.Status.ObservedGeneration = g }

func (w *Widget) DeepCopyObject() runtime.Object {
	out := *w
	w.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = make([]metav1.Condition, len(w.Status.Conditions))
	for i := range w.Status.Conditions {
		w.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
	}
	if w.Status.Conditions == nil {
		out.Status.Conditions = nil
	}
	return &out
}

type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

func (l *WidgetList) DeepCopyObject() runtime.Object {
	out := &WidgetList{TypeMeta: l.TypeMeta}
	l.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopyObject().(*Widget))
	}
	return out
}

var widgetGV = schema.GroupVersion{Group: "test.kopgo.dev", Version: "v1"}

func addWidget(s *runtime.Scheme) error {
	s.AddKnownTypes(widgetGV, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, widgetGV)
	return nil
}

func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	str := func(t string) apiextensionsv1.JSONSchemaProps { return apiextensionsv1.JSONSchemaProps{Type: t} }
	condition := apiextensionsv1.JSONSchemaProps{Type: "object", Required: []string{"type", "status", "lastTransitionTime", "reason", "message"},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"type": str("string"), "status": str("string"), "reason": str("string"), "message": str("string"),
			"lastTransitionTime": {Type: "string", Format: "date-time"}, "observedGeneration": str("integer"),
		}}
	mapKeys := "map"
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + widgetGV.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: widgetGV.Group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: widgetGV.Version, Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": str("integer")}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"observedGeneration": str("integer"), "phase": str("string"),
							"conditions": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &condition},
								XListType: &mapKeys, XListMapKeys: []string{"type"}},
						}},
					},
				}},
			}},
		},
	}
}

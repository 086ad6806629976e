package widget

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Widget is a small custom resource for tests: a spec, and a status with a
// scalar, observedGeneration and conditions.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired state.
	Spec WidgetSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is the desired state.
type WidgetSpec struct { //nolint:revive // Kubernetes API types are named Kind, KindSpec, KindList
	// Size is any number.
	Size int64 `json:"size,omitempty"`
}

// WidgetStatus is the observed state.
type WidgetStatus struct { //nolint:revive // Kubernetes API types are named Kind, KindSpec, KindList
	// ObservedGeneration is the generation last handled.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase is a free-form scalar.
	Phase string `json:"phase,omitempty"`
	// Conditions are the kstatus conditions.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// GetConditions implements status.Getter.
func (w *Widget) GetConditions() []metav1.Condition { return w.Status.Conditions }

// SetConditions implements status.Setter.
func (w *Widget) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }

// GetObservedGeneration returns status.observedGeneration.
func (w *Widget) GetObservedGeneration() int64 { return w.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (w *Widget) SetObservedGeneration(g int64) { w.Status.ObservedGeneration = g }

// DeepCopy returns a deep copy of w, as controller-gen's generated method
// does (without it, w.DeepCopy() would be the embedded ObjectMeta's).
func (w *Widget) DeepCopy() *Widget {
	if w == nil {
		return nil
	}
	return w.DeepCopyObject().(*Widget)
}

// DeepCopyObject implements runtime.Object.
func (w *Widget) DeepCopyObject() runtime.Object {
	out := *w
	w.DeepCopyInto(&out.ObjectMeta)
	w.Status.DeepCopyInto(&out.Status)
	return &out
}

// DeepCopyInto copies s into out, as controller-gen's generated method
// does.
func (s *WidgetStatus) DeepCopyInto(out *WidgetStatus) {
	*out = *s
	if s.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(s.Conditions))
		for i := range s.Conditions {
			s.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
}

// DeepCopy returns a deep copy of s, as controller-gen's generated method
// does (status.Patcher snapshots a status with it).
func (s *WidgetStatus) DeepCopy() *WidgetStatus {
	if s == nil {
		return nil
	}
	out := new(WidgetStatus)
	s.DeepCopyInto(out)
	return out
}

// WidgetList is a list of Widgets.
type WidgetList struct { //nolint:revive // Kubernetes API types are named Kind, KindSpec, KindList
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Widgets.
	Items []Widget `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (l *WidgetList) DeepCopyObject() runtime.Object {
	out := &WidgetList{TypeMeta: l.TypeMeta}
	l.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopyObject().(*Widget))
	}
	return out
}

// GroupVersion is the Widget API group and version.
var GroupVersion = schema.GroupVersion{Group: "test.kopgo.dev", Version: "v1"}

// AddToScheme registers Widget and WidgetList.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// CRD is the Widget CustomResourceDefinition: namespaced, with a status
// subresource and conditions as a list map keyed by type.
func CRD() *apiextensionsv1.CustomResourceDefinition {
	str := func(t string) apiextensionsv1.JSONSchemaProps { return apiextensionsv1.JSONSchemaProps{Type: t} }
	condition := apiextensionsv1.JSONSchemaProps{Type: "object", Required: []string{"type", "status", "lastTransitionTime", "reason", "message"},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"type": str("string"), "status": str("string"), "reason": str("string"), "message": str("string"),
			"lastTransitionTime": {Type: "string", Format: "date-time"}, "observedGeneration": str("integer"),
		}}
	mapKeys := "map"
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + GroupVersion.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: GroupVersion.Group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: GroupVersion.Version, Served: true, Storage: true,
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

package widget

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Tenant is a small cluster-scoped custom resource for tests, in the
// Widget's group: a parent whose children live in namespaces of their own
// (a Namespace, and a RoleBinding and a ResourceQuota in it). Its status
// has observedGeneration and conditions, like the Widget's. Register it
// with [AddTenantToScheme] and install [TenantCRD].
type Tenant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired state.
	Spec TenantSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status WidgetStatus `json:"status,omitempty"`
}

// TenantSpec is the desired state.
type TenantSpec struct {
	// Namespace is the namespace the tenant gets.
	Namespace string `json:"namespace,omitempty"`
	// Owner is the user the tenant's RoleBinding grants edit to.
	Owner string `json:"owner,omitempty"`
}

// GetConditions implements status.Getter.
func (t *Tenant) GetConditions() []metav1.Condition { return t.Status.Conditions }

// SetConditions implements status.Setter.
func (t *Tenant) SetConditions(c []metav1.Condition) { t.Status.Conditions = c }

// GetObservedGeneration returns status.observedGeneration.
func (t *Tenant) GetObservedGeneration() int64 { return t.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (t *Tenant) SetObservedGeneration(g int64) { t.Status.ObservedGeneration = g }

// DeepCopy returns a deep copy of t, as controller-gen's generated method
// does.
func (t *Tenant) DeepCopy() *Tenant {
	if t == nil {
		return nil
	}
	return t.DeepCopyObject().(*Tenant)
}

// DeepCopyObject implements runtime.Object.
func (t *Tenant) DeepCopyObject() runtime.Object {
	out := *t
	t.DeepCopyInto(&out.ObjectMeta)
	t.Status.DeepCopyInto(&out.Status)
	return &out
}

// TenantList is a list of Tenants.
type TenantList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Tenants.
	Items []Tenant `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (l *TenantList) DeepCopyObject() runtime.Object {
	out := &TenantList{TypeMeta: l.TypeMeta}
	l.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopy())
	}
	return out
}

// AddTenantToScheme registers Tenant and TenantList.
func AddTenantToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Tenant{}, &TenantList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// TenantCRD is the Tenant CustomResourceDefinition: cluster-scoped, with a
// status subresource and conditions as a list map keyed by type.
func TenantCRD() *apiextensionsv1.CustomResourceDefinition {
	crd := CRD() // the Widget's schema: same status
	crd.Name = "tenants." + GroupVersion.Group
	crd.Spec.Scope = apiextensionsv1.ClusterScoped
	crd.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Plural: "tenants", Singular: "tenant", Kind: "Tenant", ListKind: "TenantList"}
	v := &crd.Spec.Versions[0]
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	v.Schema.OpenAPIV3Schema.Properties["spec"] = apiextensionsv1.JSONSchemaProps{Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{"namespace": str, "owner": str}}
	return crd
}

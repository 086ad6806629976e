package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ConfigSet keeps one ConfigMap per entry of Spec.Configs, named
// "<configset>-<entry>", and deletes the ConfigMaps of entries that are
// removed.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="ConfigMaps",type=integer,JSONPath=`.status.configMaps`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ConfigSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +required
	Spec ConfigSetSpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status ConfigSetStatus `json:"status,omitzero"`
}

// ConfigSetSpec is the desired state of a ConfigSet.
type ConfigSetSpec struct {
	// Configs are the ConfigMaps to keep, one per entry.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Configs []ConfigEntry `json:"configs,omitempty"`
}

// ConfigEntry is one ConfigMap of a ConfigSet.
type ConfigEntry struct {
	// Name is the entry's name, a DNS label: the ConfigMap is named
	// "<configset>-<name>".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`

	// Data is the ConfigMap's data. Its keys are ConfigMap keys: letters,
	// digits, '-', '_' and '.', at most 253 of them, neither "." nor
	// starting with "..". Its values total at most 1 MiB (what a ConfigMap
	// holds) and carry no character that server-side apply cannot (DEL,
	// the C1 controls U+0080 to U+009F including NEL, U+FFFE and U+FFFF);
	// the controller checks the values, the API server the rest.
	// +kubebuilder:validation:MaxProperties=256
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 253 && k.matches('^[-._a-zA-Z0-9]+$') && k != '.' && !k.startsWith('..'))",message="keys must be ConfigMap keys: letters, digits, '-', '_' and '.', at most 253 characters, neither '.' nor starting with '..'"
	// +optional
	Data map[string]string `json:"data,omitempty"`
}

// ConfigSetStatus is the observed state of a ConfigSet.
type ConfigSetStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// ConfigMaps is the number of ConfigMaps the ConfigSet keeps.
	// +optional
	ConfigMaps int32 `json:"configMaps,omitempty"`

	// Conditions are Ready, Reconciling and Stalled (kstatus).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ConfigSetList is a list of ConfigSets.
//
// +kubebuilder:object:root=true
type ConfigSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ConfigSets.
	Items []ConfigSet `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &ConfigSet{}, &ConfigSetList{})
		return nil
	})
}

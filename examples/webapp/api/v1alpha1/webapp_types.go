package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WebApp runs a stateless web server: a Deployment of Spec.Replicas pods of
// Spec.Image listening on Spec.Port, a Service in front of it and a ConfigMap
// with Spec.Config mounted into the pods as environment variables.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.readyReplicas
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type WebApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec WebAppSpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status WebAppStatus `json:"status,omitzero"`
}

// WebAppSpec is the desired state of a WebApp.
type WebAppSpec struct {
	// Image is the container image, e.g. "nginx:1.27" or
	// "registry.example.com/team/web@sha256:...". Its syntax is checked by
	// the controller: a bad reference marks the WebApp Stalled.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image"`

	// Replicas is the number of pods. Default 1.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Port is the container port the server listens on, and the Service's
	// port. Default 8080.
	// +kubebuilder:default=8080
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// Config is written to a ConfigMap whose keys become the pods'
	// environment variables. Keys must be valid environment variable names
	// (checked by the controller). A change rolls the pods.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Config map[string]string `json:"config,omitempty"`
}

// WebAppStatus is the observed state of a WebApp.
type WebAppStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// ReadyReplicas is the number of available pods of the current version.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// URL is the address of the Service inside the cluster.
	// +optional
	URL string `json:"url,omitempty"`

	// Conditions are Ready, Reconciling and Stalled (kstatus).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// GetConditions implements kopgo's status.Getter.
func (w *WebApp) GetConditions() []metav1.Condition { return w.Status.Conditions }

// SetConditions implements kopgo's status.Setter.
func (w *WebApp) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }

// GetObservedGeneration returns status.observedGeneration.
func (w *WebApp) GetObservedGeneration() int64 { return w.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (w *WebApp) SetObservedGeneration(g int64) { w.Status.ObservedGeneration = g }

// WebAppList is a list of WebApps.
//
// +kubebuilder:object:root=true
type WebAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the WebApps.
	Items []WebApp `json:"items"`
}

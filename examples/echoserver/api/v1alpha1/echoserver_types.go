package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EchoServerSpec is the desired state of an EchoServer.
type EchoServerSpec struct {
	// Message is the text the server answers every request with.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message"`

	// Replicas is the number of server pods. Unset, the Deployment's own
	// default (1) applies and an autoscaler may own the field.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Port is the port the server listens on and the Service exposes.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=5678
	// +optional
	Port int32 `json:"port,omitempty"`
}

// EchoServerStatus is the observed state of an EchoServer.
type EchoServerStatus struct {
	// ObservedGeneration is the metadata.generation the controller last
	// reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// ReadyReplicas is the number of ready server pods, from the
	// Deployment's status.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// Conditions are kstatus conditions: Ready, Reconciling, Stalled.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// EchoServer is an HTTP server that answers every request with a message:
// a Deployment and a Service, synced from its spec.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=echo
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.spec.message`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EchoServer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec EchoServerSpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status EchoServerStatus `json:"status,omitempty"`
}

// EchoServerList is a list of EchoServers.
//
// +kubebuilder:object:root=true
type EchoServerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the EchoServers.
	Items []EchoServer `json:"items"`
}

// GetConditions implements status.Getter.
func (e *EchoServer) GetConditions() []metav1.Condition { return e.Status.Conditions }

// SetConditions implements status.Setter.
func (e *EchoServer) SetConditions(c []metav1.Condition) { e.Status.Conditions = c }

// GetObservedGeneration returns status.observedGeneration.
func (e *EchoServer) GetObservedGeneration() int64 { return e.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (e *EchoServer) SetObservedGeneration(g int64) { e.Status.ObservedGeneration = g }

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DNSRecord is one record at an external DNS provider: Spec.Name in
// Spec.Zone, of Spec.Type, pointing at Spec.Value. The operator creates it
// at the provider with the bearer token of the Secret Spec.SecretRef names,
// keeps it as the spec says (changes made at the provider are undone), and
// deletes it when the DNSRecord is deleted. The provider's ID for the
// record is kept in the annotation kopgo.dev/external-name.
//
// Which provider is the operator's setting (its -provider flag), not the
// spec's: a user who may create DNSRecords must not be able to point the
// operator, with its network position, at any URL.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="FQDN",type=string,JSONPath=`.status.fqdn`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Value",type=string,JSONPath=`.spec.value`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type DNSRecord struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired record.
	Spec DNSRecordSpec `json:"spec"`

	// Status is the observed state.
	// +optional
	Status DNSRecordStatus `json:"status,omitzero"`
}

// DNSRecordSpec is the desired record.
type DNSRecordSpec struct {
	// Zone is the DNS zone the record belongs to, e.g. "example.com".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*$`
	Zone string `json:"zone"`

	// Name is the record's name within the zone, e.g. "www", or "@" for
	// the zone's apex.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^(@|[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*)$`
	Name string `json:"name"`

	// Type is the record type.
	// +kubebuilder:validation:Enum=A;AAAA;CNAME;TXT
	Type string `json:"type"`

	// Value is an IPv4 address (A), an IPv6 address (AAAA), a host name
	// (CNAME) or text (TXT). The provider checks that it fits the type: a
	// value that does not marks the DNSRecord Stalled with the provider's
	// message.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value"`

	// TTL is the record's time to live in seconds. Default 300.
	// +kubebuilder:default=300
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	// +optional
	TTL int32 `json:"ttl,omitempty"`

	// SecretRef names the Secret, in the DNSRecord's namespace, whose key
	// "token" is the provider's bearer token. A change to the Secret is
	// picked up at once.
	SecretRef SecretReference `json:"secretRef"`
}

// SecretReference names a Secret in the referring object's namespace.
type SecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// TokenKey is the key of the provider's bearer token in the Secret that
// DNSRecordSpec.SecretRef names.
const TokenKey = "token"

// DNSRecordStatus is the observed state of a DNSRecord.
type DNSRecordStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// FQDN is the record's fully qualified name, e.g. "www.example.com.".
	// +optional
	FQDN string `json:"fqdn,omitempty"`

	// Conditions are Ready, Reconciling and Stalled (kstatus).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// GetConditions implements kopgo's status.Getter.
func (r *DNSRecord) GetConditions() []metav1.Condition { return r.Status.Conditions }

// SetConditions implements kopgo's status.Setter.
func (r *DNSRecord) SetConditions(c []metav1.Condition) { r.Status.Conditions = c }

// GetObservedGeneration returns status.observedGeneration.
func (r *DNSRecord) GetObservedGeneration() int64 { return r.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (r *DNSRecord) SetObservedGeneration(g int64) { r.Status.ObservedGeneration = g }

// FQDN returns the record's fully qualified name: "www.example.com." for
// name "www" in zone "example.com", "example.com." for the apex "@".
func (s *DNSRecordSpec) FQDN() string {
	if s.Name == "@" {
		return s.Zone + "."
	}
	return s.Name + "." + s.Zone + "."
}

// DNSRecordList is a list of DNSRecords.
//
// +kubebuilder:object:root=true
type DNSRecordList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the DNSRecords.
	Items []DNSRecord `json:"items"`
}

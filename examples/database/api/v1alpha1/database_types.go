package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Database runs a PostgreSQL server: a StatefulSet of Spec.Replicas pods of
// postgres:<Spec.Version>, each with a volume of Spec.Storage, a headless
// Service that gives every pod a stable DNS name, a Secret with a password
// generated once, and a migration Job run once per Spec.Version.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=db
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Migrated",type=string,JSONPath=`.status.migratedVersion`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Database struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec DatabaseSpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status DatabaseStatus `json:"status,omitzero"`
}

// DatabaseSpec is the desired state of a Database. A field rule on an
// optional field runs only while the field is set, so removing
// storageClassName is refused here.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.storageClassName) || has(self.storageClassName)",message="storageClassName cannot be removed once set: a StatefulSet's volume claim templates are immutable"
type DatabaseSpec struct {
	// Version is the PostgreSQL version: the tag of the server's image,
	// postgres:<version>, e.g. "17.2". Changing it rolls the server pods
	// and then runs the migration Job of the new version, once.
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+){0,2}$`
	// +kubebuilder:validation:MaxLength=32
	Version string `json:"version"`

	// Replicas is the number of server pods, each with a volume of its
	// own. Pod <name>-0 is the one Status.Endpoint names; replication
	// between the pods is the image's business (this example configures
	// none). Default 1.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Storage is the size of each pod's volume. Default 1Gi. It cannot
	// change once set: a StatefulSet's volume claim templates cannot.
	// +kubebuilder:default="1Gi"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="storage cannot change: a StatefulSet's volume claim templates are immutable"
	// +optional
	Storage *resource.Quantity `json:"storage,omitempty"`

	// StorageClassName is the StorageClass of the volumes. Default: the
	// cluster's default StorageClass. It cannot change once set.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="storageClassName cannot change: a StatefulSet's volume claim templates are immutable"
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// Migration is the Job run once for each Version, once the server
	// pods are ready.
	// +optional
	Migration Migration `json:"migration,omitzero"`
}

// Migration is the Job a Database runs once per version: by default
// `vacuumdb --all --analyze-in-stages`, which PostgreSQL recommends after
// an upgrade; an application's schema migrations (an image of flyway,
// golang-migrate, ...) otherwise. Its container reads the server's address
// and credentials from PGHOST, PGPORT, PGUSER and PGPASSWORD.
//
// It runs once per Spec.Version: a change to Migration alone does not run
// it again. A failed migration is not retried (a half-applied migration
// needs a person): fix the cause, then delete the Job, and it runs again.
type Migration struct {
	// Image runs the migration. Default: the server's image,
	// postgres:<version>.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// Command is the migration's command. Default: vacuumdb --all
	// --analyze-in-stages.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Command []string `json:"command,omitempty"`

	// PodLabels are added to the migration pod's labels (a cost centre's
	// label, a policy selector).
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	PodLabels map[string]string `json:"podLabels,omitempty"`

	// PodAnnotations are added to the migration pod's annotations (a
	// service mesh's sidecar settings).
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`
}

// DatabaseStatus is the observed state of a Database.
type DatabaseStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// ReadyReplicas is the number of ready server pods, from the
	// StatefulSet's status.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// Endpoint is the address of pod <name>-0 inside the cluster,
	// through the headless Service: <name>-0.<name>.<namespace>.svc:5432.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// CredentialsSecret is the name of the Secret that holds the
	// generated password (keys "username" and "password").
	// +optional
	CredentialsSecret string `json:"credentialsSecret,omitempty"`

	// MigratedVersion is the last Version whose migration Job succeeded.
	// +optional
	MigratedVersion string `json:"migratedVersion,omitempty"`

	// Conditions are Ready, Reconciling and Stalled (kstatus).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// GetConditions implements kopgo's status.Getter.
func (d *Database) GetConditions() []metav1.Condition { return d.Status.Conditions }

// SetConditions implements kopgo's status.Setter.
func (d *Database) SetConditions(c []metav1.Condition) { d.Status.Conditions = c }

// GetObservedGeneration returns status.observedGeneration.
func (d *Database) GetObservedGeneration() int64 { return d.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (d *Database) SetObservedGeneration(g int64) { d.Status.ObservedGeneration = g }

// DatabaseList is a list of Databases.
//
// +kubebuilder:object:root=true
type DatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Databases.
	Items []Database `json:"items"`
}

package v1

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CronJobSpec is what a CronJob asks for: a Job from a template, on a
// schedule.
type CronJobSpec struct {
	// Schedule is when to run, in cron's five fields (minute, hour, day of
	// month, month, day of week) or "@every <duration>".
	// +kubebuilder:validation:MinLength=1
	// +required
	Schedule string `json:"schedule"`

	// StartingDeadlineSeconds is how late a run may still start; a run
	// missed by more is skipped.
	// +kubebuilder:validation:Minimum=0
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// ConcurrencyPolicy says what to do when a run is due while an earlier
	// one is still active.
	// +kubebuilder:default:=Allow
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// Suspend stops further runs; runs already started go on.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// JobTemplate is the Job each run creates.
	// +required
	JobTemplate batchv1.JobTemplateSpec `json:"jobTemplate"`

	// SuccessfulJobsHistoryLimit is how many finished successful Jobs to
	// keep; unset keeps them all.
	// +kubebuilder:validation:Minimum=0
	// +optional
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`

	// FailedJobsHistoryLimit is how many failed Jobs to keep; unset keeps
	// them all.
	// +kubebuilder:validation:Minimum=0
	// +optional
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty"`
}

// ConcurrencyPolicy is what a due run does while another is active.
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

const (
	// AllowConcurrent runs the new Job beside the active ones.
	AllowConcurrent ConcurrencyPolicy = "Allow"
	// ForbidConcurrent skips the run.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// ReplaceConcurrent deletes the active Jobs and runs the new one.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// CronJobStatus is what the controller observed.
type CronJobStatus struct {
	// Active are the Jobs running now.
	// +listType=atomic
	// +optional
	Active []corev1.ObjectReference `json:"active,omitempty"`

	// LastScheduleTime is when the latest Job was scheduled to run.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// Conditions describe the CronJob's state.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// CronJob runs a Job on a schedule.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type CronJob struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +required
	Spec CronJobSpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status CronJobStatus `json:"status,omitzero"`
}

// CronJobList is a list of CronJobs.
//
// +kubebuilder:object:root=true
type CronJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the CronJobs.
	Items []CronJob `json:"items"`
}

// Package before is the controller of kubebuilder's CronJob tutorial
// (kubebuilder v4.16.0) as the tutorial builds it, written again for
// kopgo's migration guide (docs/kubebuilder.md): plain controller-runtime,
// status written with Status().Update after re-reading the object, Jobs
// created with Create and deleted with Delete, the requeue in a
// ctrl.Result. Package after is the same controller once migrated to
// kopgo's helpers; the guide goes from one to the other step by step, and
// its tests run both through the same scenarios and count their requests.
package before

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	kbatch "k8s.io/api/batch/v1" //nolint:importas // the tutorial's alias: batchv1 is the CronJob API
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/reference"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	batchv1 "github.com/kopgo/kopgo/docs/kubebuilder/api/v1"
	"github.com/kopgo/kopgo/docs/kubebuilder/internal/cron"
)

// CronJobReconciler reconciles a CronJob object.
type CronJobReconciler struct {
	client.Client
	Scheme *runtime.Scheme
	Clock
}

// Clock tells the time; tests move it.
type Clock interface {
	Now() time.Time
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// The condition types the tutorial keeps.
const (
	typeAvailableCronJob   = "Available"
	typeProgressingCronJob = "Progressing"
	typeDegradedCronJob    = "Degraded"
)

var scheduledTimeAnnotation = "batch.guide.kopgo.dev/scheduled-at"

// +kubebuilder:rbac:groups=batch.guide.kopgo.dev,resources=cronjobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=batch.guide.kopgo.dev,resources=cronjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=batch.guide.kopgo.dev,resources=cronjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=get

// Reconcile runs the CronJob's Jobs on schedule.
func (r *CronJobReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)

	// 1: load the CronJob.
	var cronJob batchv1.CronJob
	if err := r.Get(ctx, req.NamespacedName, &cronJob); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil // deleted: nothing to do
		}
		return ctrl.Result{}, err
	}

	// Conditions start as Progressing=Unknown, written at once, and the
	// CronJob is read again for the resourceVersion of that write.
	if len(cronJob.Status.Conditions) == 0 {
		apimeta.SetStatusCondition(&cronJob.Status.Conditions, metav1.Condition{
			Type: typeProgressingCronJob, Status: metav1.ConditionUnknown, Reason: "Reconciling", Message: "Starting reconciliation",
		})
		if err := r.Status().Update(ctx, &cronJob); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Get(ctx, req.NamespacedName, &cronJob); err != nil {
			return ctrl.Result{}, err
		}
	}

	// 2: list the CronJob's Jobs (the index is set up in SetupWithManager)
	// and rebuild the status from them.
	var childJobs kbatch.JobList
	if err := r.List(ctx, &childJobs, client.InNamespace(req.Namespace), client.MatchingFields{jobOwnerKey: req.Name}); err != nil {
		if err := r.Get(ctx, req.NamespacedName, &cronJob); err != nil {
			return ctrl.Result{}, err
		}
		apimeta.SetStatusCondition(&cronJob.Status.Conditions, metav1.Condition{
			Type: typeDegradedCronJob, Status: metav1.ConditionTrue, Reason: "ReconciliationError",
			Message: fmt.Sprintf("Failed to list child jobs: %v", err),
		})
		if err := r.Status().Update(ctx, &cronJob); err != nil {
			log.Error(err, "Failed to update CronJob status")
		}
		return ctrl.Result{}, err
	}

	var activeJobs, successfulJobs, failedJobs []*kbatch.Job
	var mostRecentTime *time.Time
	for i := range childJobs.Items {
		job := &childJobs.Items[i]
		switch isJobFinished(job) {
		case "":
			activeJobs = append(activeJobs, job)
		case kbatch.JobFailed:
			failedJobs = append(failedJobs, job)
		case kbatch.JobComplete:
			successfulJobs = append(successfulJobs, job)
		}
		scheduledAt, err := scheduledTimeOf(job)
		if err != nil {
			log.Error(err, "Unable to parse the scheduled time of a child Job", "job", job.Name)
			continue
		}
		if scheduledAt != nil && (mostRecentTime == nil || mostRecentTime.Before(*scheduledAt)) {
			mostRecentTime = scheduledAt
		}
	}
	cronJob.Status.LastScheduleTime = nil
	if mostRecentTime != nil {
		cronJob.Status.LastScheduleTime = &metav1.Time{Time: *mostRecentTime}
	}
	cronJob.Status.Active = nil
	for _, job := range activeJobs {
		jobRef, err := reference.GetReference(r.Scheme, job)
		if err != nil {
			log.Error(err, "Unable to make a reference to an active Job", "job", job.Name)
			continue
		}
		cronJob.Status.Active = append(cronJob.Status.Active, *jobRef)
	}

	suspended := cronJob.Spec.Suspend != nil && *cronJob.Spec.Suspend
	switch {
	case suspended:
		setCondition(&cronJob, typeAvailableCronJob, metav1.ConditionFalse, "Suspended", "CronJob is suspended")
	case len(failedJobs) > 0:
		msg := fmt.Sprintf("%d job(s) have failed", len(failedJobs))
		setCondition(&cronJob, typeDegradedCronJob, metav1.ConditionTrue, "JobsFailed", msg)
		setCondition(&cronJob, typeAvailableCronJob, metav1.ConditionFalse, "JobsFailed", msg)
	case len(activeJobs) > 0:
		setCondition(&cronJob, typeProgressingCronJob, metav1.ConditionTrue, "JobsActive", fmt.Sprintf("%d job(s) are currently active", len(activeJobs)))
		setCondition(&cronJob, typeAvailableCronJob, metav1.ConditionTrue, "JobsActive", fmt.Sprintf("CronJob is progressing with %d active job(s)", len(activeJobs)))
	default:
		setCondition(&cronJob, typeAvailableCronJob, metav1.ConditionTrue, "AllJobsCompleted", "All jobs have completed successfully")
		setCondition(&cronJob, typeProgressingCronJob, metav1.ConditionFalse, "NoJobsActive", "No jobs are currently active")
	}
	if err := r.Status().Update(ctx, &cronJob); err != nil {
		return ctrl.Result{}, err
	}

	// 3: delete old finished Jobs beyond the history limits, best effort.
	if limit := cronJob.Spec.FailedJobsHistoryLimit; limit != nil {
		for _, job := range oldest(failedJobs, int(*limit)) {
			if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				log.Error(err, "Unable to delete an old failed Job", "job", job.Name)
			}
		}
	}
	if limit := cronJob.Spec.SuccessfulJobsHistoryLimit; limit != nil {
		for _, job := range oldest(successfulJobs, int(*limit)) {
			if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				log.Error(err, "Unable to delete an old successful Job", "job", job.Name)
			}
		}
	}

	// 4: a suspended CronJob runs nothing.
	if suspended {
		return ctrl.Result{}, nil
	}

	// 5: the next run, and whether one was missed.
	missedRun, nextRun, err := nextSchedule(&cronJob, r.Now())
	if err != nil {
		if err := r.Get(ctx, req.NamespacedName, &cronJob); err != nil {
			return ctrl.Result{}, err
		}
		setCondition(&cronJob, typeDegradedCronJob, metav1.ConditionTrue, "InvalidSchedule", fmt.Sprintf("Failed to parse schedule: %v", err))
		if err := r.Status().Update(ctx, &cronJob); err != nil {
			log.Error(err, "Failed to update CronJob status")
		}
		return ctrl.Result{}, nil // nothing to retry until the schedule changes
	}
	scheduledResult := ctrl.Result{RequeueAfter: nextRun.Sub(r.Now())}

	// 6: run a Job if one is due, not too late, and allowed.
	if missedRun.IsZero() {
		return scheduledResult, nil
	}
	if d := cronJob.Spec.StartingDeadlineSeconds; d != nil && missedRun.Add(time.Duration(*d)*time.Second).Before(r.Now()) {
		if err := r.Get(ctx, req.NamespacedName, &cronJob); err != nil {
			return ctrl.Result{}, err
		}
		setCondition(&cronJob, typeDegradedCronJob, metav1.ConditionTrue, "MissedSchedule", fmt.Sprintf("Missed starting deadline for run at %v", missedRun))
		if err := r.Status().Update(ctx, &cronJob); err != nil {
			log.Error(err, "Failed to update CronJob status")
		}
		return scheduledResult, nil
	}
	if cronJob.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent && len(activeJobs) > 0 {
		return scheduledResult, nil
	}
	if cronJob.Spec.ConcurrencyPolicy == batchv1.ReplaceConcurrent {
		for _, job := range activeJobs {
			if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, err
			}
		}
	}

	job, err := r.constructJobForCronJob(&cronJob, missedRun)
	if err != nil {
		return scheduledResult, nil // retried at the next run, or when the CronJob changes
	}
	if err := r.Create(ctx, job); err != nil {
		if err := r.Get(ctx, req.NamespacedName, &cronJob); err != nil {
			return ctrl.Result{}, err
		}
		setCondition(&cronJob, typeDegradedCronJob, metav1.ConditionTrue, "JobCreationFailed", fmt.Sprintf("Failed to create job: %v", err))
		if err := r.Status().Update(ctx, &cronJob); err != nil {
			log.Error(err, "Failed to update CronJob status")
		}
		return ctrl.Result{}, err
	}

	if err := r.Get(ctx, req.NamespacedName, &cronJob); err != nil {
		return ctrl.Result{}, err
	}
	setCondition(&cronJob, typeProgressingCronJob, metav1.ConditionTrue, "JobCreated", "Created job "+job.Name)
	if err := r.Status().Update(ctx, &cronJob); err != nil {
		log.Error(err, "Failed to update CronJob status")
	}

	// 7: look again at the next run.
	return scheduledResult, nil
}

func setCondition(cronJob *batchv1.CronJob, t string, s metav1.ConditionStatus, reason, message string) {
	apimeta.SetStatusCondition(&cronJob.Status.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: message})
}

// constructJobForCronJob is the Job of the run scheduled at scheduledTime,
// named after it so that one run never makes two Jobs.
func (r *CronJobReconciler) constructJobForCronJob(cronJob *batchv1.CronJob, scheduledTime time.Time) (*kbatch.Job, error) {
	job := &kbatch.Job{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{},
			Annotations: map[string]string{},
			Name:        fmt.Sprintf("%s-%d", cronJob.Name, scheduledTime.Unix()),
			Namespace:   cronJob.Namespace,
		},
		Spec: *cronJob.Spec.JobTemplate.Spec.DeepCopy(),
	}
	maps.Copy(job.Annotations, cronJob.Spec.JobTemplate.Annotations)
	job.Annotations[scheduledTimeAnnotation] = scheduledTime.Format(time.RFC3339)
	maps.Copy(job.Labels, cronJob.Spec.JobTemplate.Labels)
	if err := ctrl.SetControllerReference(cronJob, job, r.Scheme); err != nil {
		return nil, err
	}
	return job, nil
}

// isJobFinished returns Complete or Failed for a finished Job, "" for one
// still running.
func isJobFinished(job *kbatch.Job) kbatch.JobConditionType {
	for _, c := range job.Status.Conditions {
		if (c.Type == kbatch.JobComplete || c.Type == kbatch.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Type
		}
	}
	return ""
}

// scheduledTimeOf reads the time a Job was scheduled for from its annotation.
func scheduledTimeOf(job *kbatch.Job) (*time.Time, error) {
	raw := job.Annotations[scheduledTimeAnnotation]
	if raw == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// oldest returns the Jobs to delete so that keep remain, oldest first.
func oldest(jobs []*kbatch.Job, keep int) []*kbatch.Job {
	if len(jobs) <= keep {
		return nil
	}
	slices.SortStableFunc(jobs, func(a, b *kbatch.Job) int {
		switch {
		case a.Status.StartTime == nil && b.Status.StartTime == nil:
			return 0
		case a.Status.StartTime == nil:
			return -1
		case b.Status.StartTime == nil:
			return 1
		}
		return a.Status.StartTime.Compare(b.Status.StartTime.Time)
	})
	return jobs[:len(jobs)-keep]
}

// nextSchedule returns the latest run missed since the last one (zero if
// none) and the next run. It refuses to catch up more than 100 runs: a
// clock far off, or a controller down for long, would otherwise start them
// all.
func nextSchedule(cronJob *batchv1.CronJob, now time.Time) (lastMissed, next time.Time, err error) {
	sched, err := cron.Parse(cronJob.Spec.Schedule)
	if err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("unparseable schedule %q: %w", cronJob.Spec.Schedule, err)
	}
	earliest := cronJob.CreationTimestamp.Time
	if cronJob.Status.LastScheduleTime != nil {
		earliest = cronJob.Status.LastScheduleTime.Time
	}
	if d := cronJob.Spec.StartingDeadlineSeconds; d != nil {
		if deadline := now.Add(-time.Duration(*d) * time.Second); deadline.After(earliest) {
			earliest = deadline
		}
	}
	if earliest.After(now) {
		return time.Time{}, sched.Next(now), nil
	}
	starts := 0
	for t := sched.Next(earliest); !t.IsZero() && !t.After(now); t = sched.Next(t) {
		lastMissed = t
		if starts++; starts > 100 {
			return time.Time{}, time.Time{}, fmt.Errorf("more than 100 missed start times: set or decrease .spec.startingDeadlineSeconds, or check clock skew")
		}
	}
	return lastMissed, sched.Next(now), nil
}

var (
	jobOwnerKey = ".metadata.controller"
	apiGVStr    = batchv1.GroupVersion.String()
)

// SetupWithManager sets up the controller with the Manager.
func (r *CronJobReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = realClock{}
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &kbatch.Job{}, jobOwnerKey, func(obj client.Object) []string {
		owner := metav1.GetControllerOf(obj)
		if owner == nil || owner.APIVersion != apiGVStr || owner.Kind != "CronJob" {
			return nil
		}
		return []string{owner.Name}
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&batchv1.CronJob{}).
		Owns(&kbatch.Job{}).
		Named("cronjob").
		Complete(r)
}

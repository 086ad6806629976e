// Package after is the controller of kubebuilder's CronJob tutorial (see
// package before) migrated to kopgo's helpers as docs/kubebuilder.md
// describes: its helpers from the manager in SetupWithManager
// (kopcontroller.EnvFor), the conditions through status.Access with one
// status write at the end of a reconcile (status.Begin, status.Finish,
// status.Patcher), the Job applied (apply), its owner reference from
// owners, old Jobs deleted with gc.Delete, events, and the requeue through
// reconciler.Result. main.go and the tutorial's suite_test.go construct it
// as before, with a Client and a Scheme.
package after

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	kbatch "k8s.io/api/batch/v1" //nolint:importas // the tutorial's alias: batchv1 is the CronJob API
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/reference"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kopgo/kopgo/apply"
	kopcontroller "github.com/kopgo/kopgo/controller"
	batchv1 "github.com/kopgo/kopgo/docs/kubebuilder/api/v1"
	"github.com/kopgo/kopgo/docs/kubebuilder/internal/cron"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/gc"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/owners"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
)

// CronJobReconciler reconciles a CronJob object.
type CronJobReconciler struct {
	client.Client
	Scheme *runtime.Scheme
	Clock

	env *reconciler.Env // kopgo's helpers, built in SetupWithManager
}

// Clock tells the time; tests move it.
type Clock interface {
	Now() time.Time
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// FieldOwner is the field manager of the Jobs and of the CronJobs' status.
const FieldOwner = "cronjob-controller"

var scheduledTimeAnnotation = "batch.guide.kopgo.dev/scheduled-at"

// +kubebuilder:rbac:groups=batch.guide.kopgo.dev,resources=cronjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch.guide.kopgo.dev,resources=cronjobs/status,verbs=patch
// +kubebuilder:rbac:groups=batch.guide.kopgo.dev,resources=cronjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile runs the CronJob's Jobs on schedule.
func (r *CronJobReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if r.env == nil {
		return ctrl.Result{}, reconcile.TerminalError(errors.New("CronJobReconciler: SetupWithManager was not called"))
	}
	var cronJob batchv1.CronJob
	if err := r.Get(ctx, req.NamespacedName, &cronJob); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	s := status.Access(&cronJob, &cronJob.Status.Conditions) // CronJob has no condition methods
	p := status.NewPatcher(&cronJob)                         // the status as read
	read := status.Begin(s)
	action, err := r.reconcile(ctx, &cronJob, s)
	status.Finish(s, read, err) // Ready, Reconciling, Stalled from the outcome
	if _, perr := p.Patch(ctx, r.env.Client, &cronJob); perr != nil {
		return ctrl.Result{}, errors.Join(err, perr)
	}
	return reconciler.Result(action, err)
}

// reconcile rebuilds the status from the CronJob's Jobs, deletes old ones,
// runs the Job that is due, and says when to look again.
func (r *CronJobReconciler) reconcile(ctx context.Context, cronJob *batchv1.CronJob, s status.Setter) (reconciler.Action, error) {
	var childJobs kbatch.JobList
	if err := r.List(ctx, &childJobs, client.InNamespace(cronJob.Namespace), client.MatchingFields{jobOwnerKey: cronJob.Name}); err != nil {
		return reconciler.Done(), err
	}
	activeJobs, successfulJobs, failedJobs := r.observe(ctx, cronJob, childJobs.Items)
	suspended := cronJob.Spec.Suspend != nil && *cronJob.Spec.Suspend
	switch {
	case suspended:
		setAvailable(s, metav1.ConditionFalse, "Suspended", "CronJob is suspended")
	case len(failedJobs) > 0:
		setAvailable(s, metav1.ConditionFalse, "JobsFailed", fmt.Sprintf("%d job(s) have failed", len(failedJobs)))
	case len(activeJobs) > 0:
		setAvailable(s, metav1.ConditionTrue, "JobsActive", fmt.Sprintf("CronJob is progressing with %d active job(s)", len(activeJobs)))
	default:
		setAvailable(s, metav1.ConditionTrue, "AllJobsCompleted", "All jobs have completed successfully")
	}

	r.deleteOldJobs(ctx, cronJob, failedJobs, cronJob.Spec.FailedJobsHistoryLimit)
	r.deleteOldJobs(ctx, cronJob, successfulJobs, cronJob.Spec.SuccessfulJobsHistoryLimit)
	if suspended {
		return reconciler.Done(), nil
	}

	missedRun, nextRun, err := nextSchedule(cronJob, r.Now())
	if err != nil {
		// Retrying cannot fix the schedule: Stalled until the spec changes.
		return reconciler.Done(), koperrors.Terminal(koperrors.WrapKind(koperrors.Invalid, err, "schedule of", kopmeta.RefOf(cronJob)))
	}
	next := reconciler.RequeueAfter(nextRun.Sub(r.Now()))
	if missedRun.IsZero() {
		return next, nil
	}
	if d := cronJob.Spec.StartingDeadlineSeconds; d != nil && missedRun.Add(time.Duration(*d)*time.Second).Before(r.Now()) {
		r.env.Recorder.Warning(cronJob, nil, "MissedSchedule", "Run", fmt.Sprintf("Missed the starting deadline of the run at %s", missedRun.Format(time.RFC3339)))
		return next, nil
	}
	if cronJob.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent && len(activeJobs) > 0 {
		return next, nil
	}
	if cronJob.Spec.ConcurrencyPolicy == batchv1.ReplaceConcurrent {
		if _, err := gc.Delete(ctx, r.env.Client, asObjects(activeJobs), client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			return next, err
		}
	}
	return next, r.run(ctx, cronJob, missedRun)
}

// observe sorts the Jobs into active, successful and failed, and records
// the active ones and the latest scheduled time in the status.
func (r *CronJobReconciler) observe(ctx context.Context, cronJob *batchv1.CronJob, jobs []kbatch.Job) (active, successful, failed []*kbatch.Job) {
	log := logf.FromContext(ctx)
	var mostRecentTime *time.Time
	for i := range jobs {
		job := &jobs[i]
		switch isJobFinished(job) {
		case "":
			active = append(active, job)
		case kbatch.JobFailed:
			failed = append(failed, job)
		case kbatch.JobComplete:
			successful = append(successful, job)
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
	for _, job := range active {
		jobRef, err := reference.GetReference(r.Scheme, job)
		if err != nil {
			log.Error(err, "Unable to make a reference to an active Job", "job", job.Name)
			continue
		}
		cronJob.Status.Active = append(cronJob.Status.Active, *jobRef)
	}
	return active, successful, failed
}

// setAvailable sets the CronJob's own condition; kopgo's status.Finish
// leaves conditions of other types as they are set.
func setAvailable(s status.Setter, st metav1.ConditionStatus, reason, message string) {
	status.Set(s, metav1.Condition{Type: "Available", Status: st, Reason: reason, Message: message})
}

// deleteOldJobs deletes the oldest finished Jobs beyond limit, best
// effort: a Job that could not be deleted is deleted at a later reconcile.
func (r *CronJobReconciler) deleteOldJobs(ctx context.Context, cronJob *batchv1.CronJob, finished []*kbatch.Job, limit *int32) {
	if limit == nil {
		return
	}
	res, err := gc.Delete(ctx, r.env.Client, asObjects(oldest(finished, int(*limit))), client.PropagationPolicy(metav1.DeletePropagationBackground))
	for _, ref := range res.Deleted {
		r.env.Recorder.Normal(cronJob, nil, "Deleted", "Cleanup", "Deleted old Job "+ref.Name)
	}
	if err != nil {
		logf.FromContext(ctx).Error(err, "Unable to delete old Jobs")
	}
}

// run applies the Job of the run scheduled at scheduledTime.
func (r *CronJobReconciler) run(ctx context.Context, cronJob *batchv1.CronJob, scheduledTime time.Time) error {
	job, err := r.constructJobForCronJob(cronJob, scheduledTime)
	if err != nil {
		return err
	}
	// An apply, not a create: from a cache that has not seen the Job yet,
	// the same run is applied again and answers Unchanged, not 409.
	res, err := r.env.Applier.Apply(ctx, job)
	if err != nil {
		return err
	}
	if res.Outcome == apply.Created {
		r.env.Recorder.Normal(cronJob, job, "Created", "Run", "Created Job "+job.Name)
	}
	return nil
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
	if err := owners.SetController(cronJob, job, r.Scheme); err != nil {
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

func asObjects(jobs []*kbatch.Job) []client.Object {
	objs := make([]client.Object, len(jobs))
	for i, j := range jobs {
		objs[i] = j
	}
	return objs
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

// SetupWithManager builds kopgo's helpers from the manager, then sets up
// the controller with it.
func (r *CronJobReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = realClock{}
	}
	env, err := kopcontroller.EnvFor(mgr, FieldOwner, kopcontroller.WithCachedKinds(&kbatch.Job{}))
	if err != nil {
		return err
	}
	r.env = env
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

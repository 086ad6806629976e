package database

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/examples/database/api/v1alpha1"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
)

// ChildKinds are the kinds Sync returns, to declare to reconciler.Sync
// (the controller Builder watches them without Owns).
func ChildKinds() []client.Object {
	return []client.Object{&corev1.Secret{}, &corev1.Service{}, &appsv1.StatefulSet{}, &batchv1.Job{}}
}

// Sync is the Database's sync function: from the Database and its
// observed children, the children it wants and its status fields.
//
//   - the credentials Secret "<name>-credentials", created once and never
//     written again (reconciler.CreateOnce): the password generated when
//     the Database was created stays, whatever the spec becomes;
//   - the headless Service "<name>";
//   - the StatefulSet "<name>", once the Secret exists
//     (reconciler.DependsOn: its pods read the password from it);
//   - the migration Job "<name>-migrate", run once per spec.version
//     (reconciler.RunOnce) once the StatefulSet is ready: a new version
//     replaces the Job of the previous one.
//
// Sync then summarises the children into the Database's Ready: Reconciling
// while the StatefulSet rolls out or the migration waits or runs,
// Ready=False naming the Job and its reason when the migration failed,
// Ready=True naming every child once all are ready.
//
// A Database that cannot have valid children (a name with a dot, say) is
// a terminal error of Kind Invalid naming the field: Stalled, not retried
// until it changes, and nothing is applied.
func Sync(_ context.Context, db *v1alpha1.Database, observed reconciler.Children) ([]client.Object, reconciler.Action, error) {
	if errs := validate(db); len(errs) > 0 {
		return nil, reconciler.Done(), koperrors.Terminal(koperrors.WrapKind(koperrors.Invalid, errs.ToAggregate(), "validate", kopmeta.RefOf(db)))
	}
	oldSecret, _ := observed.Get(&corev1.Secret{}, SecretName(db)).(*corev1.Secret)
	secret := credentials(db, oldSecret)
	sts := statefulSet(db)
	setStatus(db, observed)
	// Sync's own Ready=True names the first three children and counts the
	// rest ("...; and 1 more"): with four children the migration Job, the
	// one whose outcome matters most, would go unnamed. A Ready=True the
	// sync function sets stands only once every child is ready (until then
	// Sync reports Reconciling, or Ready=False naming a failed child), so
	// it can say what that means for this Database.
	status.MarkReady(db, ReasonAvailable, readyMessage(db))
	return []client.Object{
		reconciler.Child(secret, reconciler.CreateOnce),
		service(db),
		reconciler.Child(sts, reconciler.DependsOn{secret}),
		reconciler.Child(migrationJob(db), migrationOptions(db, sts, observed)...),
	}, reconciler.Done(), nil
}

// migrationOptions are the migration Job's child options: one run per
// version, and, until that run exists, after the StatefulSet is ready (the
// migration talks to the server).
//
// Once the run of this version exists, it depends on nothing any more:
// Sync never writes it again. Without this, Sync would still make it wait
// whenever the StatefulSet rolls (a scale, say), and the Database would
// read Reconciling "Job <name>-migrate waits for StatefulSet <name> to be
// ready" instead of the StatefulSet's own progress.
func migrationOptions(db *v1alpha1.Database, sts *appsv1.StatefulSet, observed reconciler.Children) []reconciler.ChildOption {
	opts := []reconciler.ChildOption{reconciler.RunOnce(db.Spec.Version)}
	if job, ok := observed.Get(&batchv1.Job{}, JobName(db)).(*batchv1.Job); !ok || job.Annotations[reconciler.RunOnceAnnotation] != db.Spec.Version {
		opts = append(opts, reconciler.DependsOn{sts})
	}
	return opts
}

// ReasonAvailable is the reason of a Database's Ready=True.
const ReasonAvailable = "Available"

// readyMessage is the message of a Database's Ready=True: what is ready,
// child by child.
func readyMessage(db *v1alpha1.Database) string {
	return fmt.Sprintf("PostgreSQL %s at %s: StatefulSet %s with %d of %d replicas ready; Service %s; Secret %s; Job %s migrated to %s",
		db.Spec.Version, Endpoint(db), db.Name, replicas(db), replicas(db), db.Name, SecretName(db), JobName(db), db.Spec.Version)
}

// setStatus fills the Database's status fields from its observed
// children. The conditions are left to Sync's summary of the children.
func setStatus(db *v1alpha1.Database, observed reconciler.Children) {
	db.Status.Endpoint = Endpoint(db)
	db.Status.CredentialsSecret = SecretName(db)
	db.Status.ReadyReplicas = 0
	if sts, ok := observed.Get(&appsv1.StatefulSet{}, db.Name).(*appsv1.StatefulSet); ok && sts.Status.ObservedGeneration >= sts.Generation {
		db.Status.ReadyReplicas = sts.Status.ReadyReplicas
	}
	if MigrationSucceeded(db, observed) {
		db.Status.MigratedVersion = db.Spec.Version
	}
}

// MigrationSucceeded reports whether the observed migration Job is the run
// of db's current version (its reconciler.RunOnceAnnotation) and has
// completed.
func MigrationSucceeded(db *v1alpha1.Database, observed reconciler.Children) bool {
	job, ok := observed.Get(&batchv1.Job{}, JobName(db)).(*batchv1.Job)
	return ok && job.Annotations[reconciler.RunOnceAnnotation] == db.Spec.Version &&
		status.ReadinessOf(job).State == status.StateCurrent
}

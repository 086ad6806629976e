package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/examples/database"
	"github.com/kopgo/kopgo/examples/database/api/v1alpha1"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit"
)

// quietWindow is how long a converged Database is watched for requests
// and events it should not cause.
const quietWindow = 30 * time.Second

// A new Database: its StatefulSet reaches its replicas, each with a bound
// volume claim, the password Secret exists, the migration Job succeeds,
// and the Database is Ready=True naming its four children and registered.
// Creating it records exactly one "created" per child, and no "updated"
// (a StatefulSet with a volume claim template that the API server
// defaults must not read as changed). Once converged, the operator sends
// no write and records no event for 30 s.
func TestNewDatabaseBecomesReadyThenQuiet(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	requests0, writes0 := traffic.Requests.Load(), traffic.Writes.Load()
	byResource := writes.snapshot()
	start := time.Now()
	db := newDatabase(t, ns, "orders", "17.2", func(db *v1alpha1.Database) { db.Spec.Replicas = new(int32(2)) })
	db = waitReady(t, db)
	toReady := time.Since(start)
	requests, nwrites := traffic.Requests.Load()-requests0, traffic.Writes.Load()-writes0
	writesToReady := writes.since(byResource)

	ctx := t.Context()
	sts, err := statefulSetOf(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if sts.Status.ReadyReplicas != 2 || db.Status.ReadyReplicas != 2 {
		t.Errorf("ready replicas: StatefulSet %d, Database status %d; want 2", sts.Status.ReadyReplicas, db.Status.ReadyReplicas)
	}
	for i := range 2 {
		var pvc corev1.PersistentVolumeClaim
		name := fmt.Sprintf("data-%s-%d", db.Name, i)
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &pvc); err != nil {
			t.Errorf("volume claim %s: %v", name, err)
		} else if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "" {
			t.Errorf("volume claim %s is %s (volume %q), want Bound", name, pvc.Status.Phase, pvc.Spec.VolumeName)
		}
	}
	secret, err := secretOf(ctx, db)
	if err != nil {
		t.Fatalf("credentials Secret: %v", err)
	}
	if len(secret.Data[database.PasswordKey]) < 16 || string(secret.Data[database.UsernameKey]) != database.Username {
		t.Errorf("credentials Secret holds %d password bytes and user %q", len(secret.Data[database.PasswordKey]), secret.Data[database.UsernameKey])
	}
	job, err := jobOf(ctx, db)
	if err != nil {
		t.Fatalf("migration Job: %v", err)
	}
	if r := status.ReadinessOf(job); r.Reason != "Complete" || job.Annotations[reconciler.RunOnceAnnotation] != "17.2" {
		t.Errorf("migration Job: %s (%s), run %q; want Complete, run 17.2", r.Reason, r.Message, job.Annotations[reconciler.RunOnceAnnotation])
	}
	if db.Status.MigratedVersion != "17.2" || db.Status.CredentialsSecret != secret.Name || db.Status.Endpoint != "orders-0.orders."+ns+".svc:5432" {
		t.Errorf("status: migrated %q, secret %q, endpoint %q", db.Status.MigratedVersion, db.Status.CredentialsSecret, db.Status.Endpoint)
	}
	ready := status.Get(db, status.Ready)
	for _, want := range []string{"StatefulSet orders with 2 of 2 replicas ready", "Service orders", "Secret orders-credentials", "Job orders-migrate migrated to 17.2"} {
		if !strings.Contains(ready.Message, want) {
			t.Errorf("Ready message %q does not say %q", ready.Message, want)
		}
	}
	if entry, ok, err := registryEntry(ctx, db); err != nil || !ok || entry != db.Status.Endpoint {
		t.Errorf("registry entry %q (present %t, %v), want %q", entry, ok, err, db.Status.Endpoint)
	}

	// The events of the creation: one Synced "created" per child kind
	// (the Job comes in a later reconcile than the others: it waits for
	// the StatefulSet), and the registration. The recorder writes them
	// from a goroutine: wait for all of them before the quiet window.
	wantCreated := map[string]int{"created Secret": 1, "created Service": 1, "created StatefulSet": 1, "created Job": 1}
	var events []event
	eventually(t, 30*time.Second, "the creation's events", func(ctx context.Context) error {
		var err error
		if events, err = eventsOf(ctx, ns, db.Name); err != nil {
			return err
		}
		if !slices.ContainsFunc(events, func(e event) bool { return e.reason == "Registered" }) {
			return fmt.Errorf("no Registered event in %v", events)
		}
		if got := changes(events); len(got) < len(wantCreated) {
			return fmt.Errorf("Synced events %v", got)
		}
		return nil
	})
	t.Logf("new Database with 2 replicas: Ready in %s; operator sent %d requests (%d writes: %v) until then; %d events: %v",
		toReady.Round(100*time.Millisecond), requests, nwrites, writesToReady, len(events), events)
	// One apply per child, none more: a child that did not change costs
	// no request, even while the StatefulSet's controller keeps writing
	// its status during the rollout. One finalizer patch, one registry
	// entry.
	for _, res := range []string{"secrets", "services", "statefulsets", "jobs", "configmaps", "databases"} {
		if n := writesToReady["PATCH "+res]; n != 1 {
			t.Errorf("%d patches of %s while the Database was created, want 1 (writes: %v)", n, res, writesToReady)
		}
	}

	// The quiet window.
	requests0, writes0 = traffic.Requests.Load(), traffic.Writes.Load()
	time.Sleep(quietWindow)
	requests, nwrites = traffic.Requests.Load()-requests0, traffic.Writes.Load()-writes0
	after, err := eventsOf(ctx, ns, db.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("converged Database, %s: %d requests, %d writes, %d new events", quietWindow, requests, nwrites, len(after)-len(events))
	if nwrites != 0 {
		t.Errorf("the operator sent %d writes in %s about a converged Database, want none", nwrites, quietWindow)
	}
	if diff := cmp.Diff(events, after, cmp.AllowUnexported(event{})); diff != "" {
		t.Errorf("events changed in the quiet window (-before +after):\n%s", diff)
	}
	// Counted after the window: a repeat's series count is written up to
	// 30 s after the repeat.
	if diff := cmp.Diff(wantCreated, changes(after)); diff != "" {
		t.Errorf("children changed by creating a Database, from its Synced events (-want +got):\n%s", diff)
	}
	var cur v1alpha1.Database
	if err := c.Get(ctx, client.ObjectKeyFromObject(db), &cur); err != nil {
		t.Fatal(err)
	}
	if cur.ResourceVersion != db.ResourceVersion {
		t.Errorf("the Database was written in the quiet window: %s", conditions(&cur))
	}
}

// The generated password is generated once: the Secret keeps its value,
// and is not written at all, across reconciles of spec changes that touch
// neither the Secret nor the version (the migration's pod annotations,
// which also do not run the migration again) and a change of replicas
// that rolls the StatefulSet.
func TestPasswordIsGeneratedOnce(t *testing.T) {
	ns := cluster.Namespace(t)
	seen := history(t, ns, "keep")
	db := waitReady(t, newDatabase(t, ns, "keep", "17.2", nil))
	ctx := t.Context()
	secret, err := secretOf(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	job, err := jobOf(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		update(t, db, func(db *v1alpha1.Database) {
			db.Spec.Migration.PodAnnotations = map[string]string{"example.com/touch": fmt.Sprint(i)}
		})
		db = waitReady(t, db)
	}
	update(t, db, func(db *v1alpha1.Database) { db.Spec.Replicas = new(int32(2)) })
	db = waitReady(t, db)
	if db.Status.ReadyReplicas != 2 {
		t.Errorf("ready replicas %d after scaling to 2", db.Status.ReadyReplicas)
	}
	// While the StatefulSet scaled, the Database said so: the migration
	// Job of this version, long finished, waits for nothing.
	states := seen()
	first := slices.IndexFunc(states, func(s string) bool { return strings.HasPrefix(s, "Ready=True/"+database.ReasonAvailable) })
	scaling := false
	for _, s := range states[first+1:] {
		if strings.Contains(s, "waits for") {
			t.Errorf("while scaling: %s", s)
		}
		scaling = scaling || strings.Contains(s, "Reconciling=True") && strings.Contains(s, "StatefulSet keep: ")
	}
	if first < 0 || !scaling {
		t.Errorf("states %q: want Ready, then the StatefulSet's progress while it scaled", states)
	}

	after, err := secretOf(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if string(after.Data[database.PasswordKey]) != string(secret.Data[database.PasswordKey]) {
		t.Errorf("the password changed across 4 spec changes")
	}
	if after.ResourceVersion != secret.ResourceVersion || after.UID != secret.UID {
		t.Errorf("the Secret was written: resourceVersion %s -> %s, uid %s -> %s", secret.ResourceVersion, after.ResourceVersion, secret.UID, after.UID)
	}
	jobAfter, err := jobOf(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if jobAfter.UID != job.UID || jobAfter.ResourceVersion != job.ResourceVersion {
		t.Errorf("the migration Job of the same version was replaced or written")
	}
}

// A new version runs one new migration Job, after the StatefulSet rolled
// to the new image; a migration whose container exits non-zero leaves the
// Database Ready=False, naming the Job, its reason and the exit code, and
// the last migrated version stays the one that succeeded.
func TestMigrationRunsOncePerVersion(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	ctx := t.Context()
	db := waitReady(t, newDatabase(t, ns, "upgrade", "16.4", nil))
	first, err := jobOf(ctx, db)
	if err != nil {
		t.Fatal(err)
	}

	update(t, db, func(db *v1alpha1.Database) { db.Spec.Version = "17.2" })
	db = waitReady(t, db)
	job, err := jobOf(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if job.UID == first.UID || job.Annotations[reconciler.RunOnceAnnotation] != "17.2" || status.ReadinessOf(job).State != status.StateCurrent {
		t.Errorf("after the upgrade: Job uid %s (first %s), run %q, %s; want a new, complete run 17.2",
			job.UID, first.UID, job.Annotations[reconciler.RunOnceAnnotation], status.ReadinessOf(job).Message)
	}
	if img := job.Spec.Template.Spec.Containers[0].Image; img != "postgres:17.2" {
		t.Errorf("migration image %s", img)
	}
	if db.Status.MigratedVersion != "17.2" {
		t.Errorf("migrated version %q, want 17.2", db.Status.MigratedVersion)
	}
	sts, err := statefulSetOf(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if img := sts.Spec.Template.Spec.Containers[0].Image; img != "postgres:17.2" {
		t.Errorf("server image %s", img)
	}
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 {
		t.Errorf("%d Jobs after one upgrade, want 1", len(jobs.Items))
	}
	eventually(t, 30*time.Second, "the upgrade's events", func(ctx context.Context) error {
		events, err := eventsOf(ctx, ns, db.Name)
		if err != nil {
			return err
		}
		got := changes(events)
		want := map[string]int{"created Secret": 1, "created Service": 1, "created StatefulSet": 1, "created Job": 2,
			"updated StatefulSet": 1, "deleted to recreate Job": 1}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("changes from the Synced events (-want +got):\n%s", diff)
		}
		return nil
	})

	// A failing migration: its pod exits with code 3.
	update(t, db, func(db *v1alpha1.Database) {
		db.Spec.Version = "17.3"
		db.Spec.Migration.PodLabels = map[string]string{testkit.PodOutcomeLabel: testkit.PodOutcomeFail}
		db.Spec.Migration.PodAnnotations = map[string]string{testkit.PodExitCodeAnnotation: "3"}
	})
	eventually(t, readyTimeout, "Ready=False naming the failed migration", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(db), db); err != nil {
			return err
		}
		r := status.Get(db, status.Ready)
		if db.Status.ObservedGeneration != db.Generation || r == nil || r.Status != metav1.ConditionFalse || r.Reason != "ChildFailed" {
			return fmt.Errorf("generation %d, observed %d, %s", db.Generation, db.Status.ObservedGeneration, conditions(db))
		}
		for _, want := range []string{"Job upgrade-migrate failed", "PodFailurePolicy", "exit code 3"} {
			if !strings.Contains(r.Message, want) {
				return fmt.Errorf("Ready message %q does not say %q", r.Message, want)
			}
		}
		return nil
	})
	t.Logf("failed migration: %s", conditions(db))
	if db.Status.MigratedVersion != "17.2" {
		t.Errorf("migrated version %q after a failed migration to 17.3, want 17.2", db.Status.MigratedVersion)
	}
	job, err = jobOf(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if job.Annotations[reconciler.RunOnceAnnotation] != "17.3" {
		t.Errorf("failed Job's run %q, want 17.3", job.Annotations[reconciler.RunOnceAnnotation])
	}
}

// Deleting a Database runs its Cleanup, which removes its registry entry,
// and lets the garbage collector delete its children: StatefulSet (with
// its pods and, by its claim retention policy, its volume claims),
// Service, Secret and Job.
func TestDeleteCleansUp(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	ctx := t.Context()
	db := waitReady(t, newDatabase(t, ns, "gone", "17.2", nil))
	if _, ok, err := registryEntry(ctx, db); err != nil || !ok {
		t.Fatalf("no registry entry before the deletion (%v)", err)
	}
	if err := c.Delete(ctx, db); err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := waitGone(waitCtx, db); err != nil {
		t.Fatalf("Database not deleted: %v", err)
	}
	if entry, ok, err := registryEntry(ctx, db); err != nil || ok {
		t.Errorf("registry entry %q still there after the Database's deletion (%v)", entry, err)
	}
	eventually(t, 90*time.Second, "the garbage collector deletes the children", func(ctx context.Context) error {
		left := map[string]int{}
		lists := map[string]client.ObjectList{
			"StatefulSet": &appsv1.StatefulSetList{}, "Service": &corev1.ServiceList{}, "Secret": &corev1.SecretList{},
			"Job": &batchv1.JobList{}, "Pod": &corev1.PodList{}, "PersistentVolumeClaim": &corev1.PersistentVolumeClaimList{},
		}
		for kind, list := range lists {
			if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{database.InstanceLabel: db.Name}); err != nil {
				return err
			}
			if n := apimeta.LenList(list); n > 0 {
				left[kind] = n
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("left: %v", left)
		}
		return nil
	})
	events, err := eventsOf(ctx, ns, db.Name)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]bool{}
	for _, e := range events {
		reasons[e.reason] = true
	}
	if !reasons["Deregistered"] || !reasons["CleanedUp"] {
		t.Errorf("events of the deletion: %v, want Deregistered and CleanedUp", slices.Sorted(maps.Keys(reasons)))
	}
}

// A new Database reads Reconciling while its children are created and
// roll out, and Ready=True only once all of them are ready: a user's
// `kubectl wait --for=condition=Ready` must not return before. (kopgo's
// loop once lost the first reconcile's status to the answer of the patch
// that adds its finalizer: the first status read Ready=True/Succeeded.)
func TestNewDatabaseIsNotReadyBeforeItsChildren(t *testing.T) {
	ns := cluster.Namespace(t)
	seen := history(t, ns, "fresh")
	waitReady(t, newDatabase(t, ns, "fresh", "17.2", nil))
	states := seen()
	var early []string
	reconciling := false
	for _, s := range states {
		switch {
		case strings.HasPrefix(s, "Ready=True/"+database.ReasonAvailable+":"):
		case strings.HasPrefix(s, "Ready=True"):
			early = append(early, s)
		case strings.Contains(s, "Reconciling=True"):
			reconciling = true
		}
	}
	if !reconciling {
		t.Errorf("never Reconciling while the children were created: %q", states)
	}
	if len(early) > 0 {
		t.Errorf("Ready=True before every child was ready: %q; states %q", early, states)
	}
}

// Bad input: the CRD refuses a storage change with its message; a name
// that cannot name the Service makes the Database Stalled, naming the
// field, with no child created and no finalizer added, so that it is
// deleted at once.
func TestBadInput(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	ctx := t.Context()

	db := newDatabase(t, ns, "fixed", "17.2", nil)
	if err := c.Get(ctx, client.ObjectKeyFromObject(db), db); err != nil {
		t.Fatal(err)
	}
	if db.Spec.Storage == nil || db.Spec.Storage.String() != "1Gi" {
		t.Errorf("storage defaulted to %v, want 1Gi", db.Spec.Storage)
	}
	bigger := resource.MustParse("2Gi")
	// The operator's finalizer and status writes may come between our
	// read and our update: retry those conflicts, not the refusal.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(db), db); err != nil {
			return err
		}
		db.Spec.Storage = &bigger
		return c.Update(ctx, db)
	})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "storage cannot change") {
		t.Errorf("storage change: %v, want Invalid saying storage cannot change", err)
	}

	dotted := newDatabase(t, ns, "orders.v2", "17.2", nil)
	eventually(t, 30*time.Second, "Stalled naming metadata.name", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(dotted), dotted); err != nil {
			return err
		}
		s := status.Get(dotted, status.Stalled)
		if s == nil || s.Status != metav1.ConditionTrue || !strings.Contains(s.Message, `metadata.name: Invalid value: "orders.v2"`) {
			return fmt.Errorf("conditions %s", conditions(dotted))
		}
		return nil
	})
	if len(dotted.Finalizers) > 0 {
		t.Errorf("finalizers %v on a Database invalid from the start", dotted.Finalizers)
	}
	var secrets corev1.SecretList
	if err := c.List(ctx, &secrets, client.InNamespace(ns), client.MatchingLabels{database.InstanceLabel: dotted.Name}); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) > 0 {
		t.Errorf("%d Secrets created for an invalid Database", len(secrets.Items))
	}
}

// A Database deleted right after its creation, while its first reconcile
// may still run, leaves nothing behind: kopgo runs the Cleanup of an
// object deleted before its finalizer was on, so no registry entry stays.
func TestDeletedAtOnceLeavesNoEntry(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	var dbs []*v1alpha1.Database
	for i := range 8 {
		db := newDatabase(t, ns, fmt.Sprintf("brief-%d", i), "17.2", nil)
		if err := c.Delete(t.Context(), db); err != nil {
			t.Fatal(err)
		}
		dbs = append(dbs, db)
	}
	eventually(t, time.Minute, "no registry entry for a deleted Database", func(ctx context.Context) error {
		var left []string
		for _, db := range dbs {
			if err := c.Get(ctx, client.ObjectKeyFromObject(db), &v1alpha1.Database{}); !apierrors.IsNotFound(err) {
				left = append(left, db.Name+" not deleted")
				continue
			}
			if entry, ok, err := registryEntry(ctx, db); err != nil || ok {
				left = append(left, fmt.Sprintf("%s: registry entry %q (%v)", db.Name, entry, err))
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("%s", strings.Join(left, "; "))
		}
		return nil
	})
}

package database_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/examples/database"
	"github.com/kopgo/kopgo/examples/database/api/v1alpha1"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
)

func newDB(mutate ...func(*v1alpha1.Database)) *v1alpha1.Database {
	db := &v1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders", Generation: 3},
		Spec:       v1alpha1.DatabaseSpec{Version: "17.2"},
	}
	for _, m := range mutate {
		m(db)
	}
	return db
}

// children runs Sync and returns its desired children by kind, unwrapped,
// with their options.
func children(t *testing.T, db *v1alpha1.Database, observed reconciler.Children) map[string]child {
	t.Helper()
	desired, action, err := database.Sync(t.Context(), db, observed)
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if action != reconciler.Done() {
		t.Errorf("action %s, want done", action)
	}
	out := map[string]child{}
	for _, d := range desired {
		obj, opts := reconciler.ChildOf(d)
		out[kind(obj)] = child{obj: obj, opts: opts}
	}
	if len(out) != 4 {
		t.Fatalf("%d children of %d kinds, want 4", len(desired), len(out))
	}
	return out
}

type child struct {
	obj  client.Object
	opts reconciler.ChildOptions
}

func job(key string, conds ...batchv1.JobConditionType) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders-migrate",
		Annotations: map[string]string{reconciler.RunOnceAnnotation: key}}}
	for _, c := range conds {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: c, Status: corev1.ConditionTrue, Reason: string(c)})
	}
	return j
}

// The password is generated when there is no Secret yet, and is the
// stored one once there is: the desired children say what is.
func TestSyncPassword(t *testing.T) {
	first := children(t, newDB(), nil)["Secret"]
	if first.opts.Update != reconciler.CreateOnce {
		t.Errorf("Secret's strategy %s, want CreateOnce", first.opts.Update)
	}
	pw := first.obj.(*corev1.Secret).Data[database.PasswordKey]
	if len(pw) < 16 {
		t.Errorf("generated password of %d bytes", len(pw))
	}
	if again := children(t, newDB(), nil)["Secret"].obj.(*corev1.Secret).Data[database.PasswordKey]; string(again) == string(pw) {
		t.Error("two new Databases got the same password")
	}
	stored := first.obj.DeepCopyObject().(*corev1.Secret)
	stored.Namespace = "shop"
	kept := children(t, newDB(), reconciler.Children{stored})["Secret"].obj.(*corev1.Secret)
	if string(kept.Data[database.PasswordKey]) != string(pw) || string(kept.Data[database.UsernameKey]) != database.Username {
		t.Errorf("desired Secret %q/%q, want the stored password and user %s", kept.Data[database.UsernameKey], kept.Data[database.PasswordKey], database.Username)
	}
}

// The migration Job runs once per version, after the StatefulSet, until
// the run of this version exists; then it waits for nothing.
func TestSyncMigrationOptions(t *testing.T) {
	tests := []struct {
		name     string
		observed reconciler.Children
		waits    bool
	}{
		{"no Job yet", nil, true},
		{"the previous version's run", reconciler.Children{job("16.4", batchv1.JobComplete)}, true},
		{"this version's run, running", reconciler.Children{job("17.2")}, false},
		{"this version's run, failed", reconciler.Children{job("17.2", batchv1.JobFailed)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := children(t, newDB(), tt.observed)["Job"]
			if j.opts.Update != reconciler.RunOnceStrategy || j.opts.RunKey != "17.2" {
				t.Errorf("Job's strategy %s, key %q; want RunOnce 17.2", j.opts.Update, j.opts.RunKey)
			}
			var deps []string
			for _, d := range j.opts.DependsOn {
				deps = append(deps, kind(d)+" "+d.GetName())
			}
			var want []string
			if tt.waits {
				want = []string{"StatefulSet orders"}
			}
			if diff := cmp.Diff(want, deps); diff != "" {
				t.Errorf("DependsOn (-want +got):\n%s", diff)
			}
		})
	}
}

// The migration Job: the server's image and vacuumdb by default, the
// spec's image and command otherwise; the spec's pod labels and
// annotations next to the operator's labels; a pod failure policy that
// fails the Job on a non-zero exit code.
func TestSyncMigrationJob(t *testing.T) {
	j := children(t, newDB(), nil)["Job"].obj.(*batchv1.Job)
	c := j.Spec.Template.Spec.Containers[0]
	if c.Image != "postgres:17.2" || strings.Join(c.Command, " ") != "vacuumdb --all --analyze-in-stages" {
		t.Errorf("default migration: %s %q", c.Image, c.Command)
	}
	if j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever || j.Spec.PodFailurePolicy == nil ||
		j.Spec.PodFailurePolicy.Rules[0].Action != batchv1.PodFailurePolicyActionFailJob {
		t.Errorf("restart policy %s, pod failure policy %+v", j.Spec.Template.Spec.RestartPolicy, j.Spec.PodFailurePolicy)
	}

	db := newDB(func(db *v1alpha1.Database) {
		db.Spec.Migration = v1alpha1.Migration{
			Image: "example.com/orders-schema:42", Command: []string{"migrate", "up"},
			PodLabels: map[string]string{"team": "orders"}, PodAnnotations: map[string]string{"sidecar.example.com/inject": "false"},
		}
	})
	j = children(t, db, nil)["Job"].obj.(*batchv1.Job)
	c = j.Spec.Template.Spec.Containers[0]
	if c.Image != "example.com/orders-schema:42" || strings.Join(c.Command, " ") != "migrate up" {
		t.Errorf("migration: %s %q", c.Image, c.Command)
	}
	wantLabels := map[string]string{
		"team": "orders", "app.kubernetes.io/name": "postgresql", "app.kubernetes.io/instance": "orders",
		"app.kubernetes.io/managed-by": "kopgo-database", "app.kubernetes.io/component": "migration",
	}
	if diff := cmp.Diff(wantLabels, j.Spec.Template.Labels); diff != "" {
		t.Errorf("pod labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(db.Spec.Migration.PodAnnotations, j.Spec.Template.Annotations); diff != "" {
		t.Errorf("pod annotations (-want +got):\n%s", diff)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil {
			env[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		}
	}
	wantEnv := map[string]string{"PGHOST": "orders-0.orders", "PGPORT": "5432", "PGUSER": "orders-credentials/username",
		"PGPASSWORD": "orders-credentials/password", "DATABASE_VERSION": "17.2"}
	if diff := cmp.Diff(wantEnv, env); diff != "" {
		t.Errorf("migration environment (-want +got):\n%s", diff)
	}
}

// The StatefulSet and the Service: the version's image, the replicas, a
// claim per pod of the spec's size and class, claims deleted with the
// StatefulSet, and a headless Service selecting only the server pods.
func TestSyncServer(t *testing.T) {
	class := "fast"
	db := newDB(func(db *v1alpha1.Database) {
		db.Spec.Replicas = new(int32(3))
		size := resourceQuantity(t, "20Gi")
		db.Spec.Storage, db.Spec.StorageClassName = &size, &class
	})
	ch := children(t, db, nil)
	sts := ch["StatefulSet"].obj.(*appsv1.StatefulSet)
	if *sts.Spec.Replicas != 3 || sts.Spec.ServiceName != "orders" || sts.Spec.Template.Spec.Containers[0].Image != "postgres:17.2" {
		t.Errorf("StatefulSet: %d replicas, service %q, image %s", *sts.Spec.Replicas, sts.Spec.ServiceName, sts.Spec.Template.Spec.Containers[0].Image)
	}
	claim := sts.Spec.VolumeClaimTemplates[0]
	if got := claim.Spec.Resources.Requests[corev1.ResourceStorage]; got.String() != "20Gi" || *claim.Spec.StorageClassName != "fast" {
		t.Errorf("claim template: %s of class %v", got.String(), claim.Spec.StorageClassName)
	}
	if p := sts.Spec.PersistentVolumeClaimRetentionPolicy; p.WhenDeleted != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
		t.Errorf("claims when deleted: %s, want Delete", p.WhenDeleted)
	}
	svc := ch["Service"].obj.(*corev1.Service)
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.Selector["app.kubernetes.io/component"] != "server" {
		t.Errorf("Service: clusterIP %q, selector %v", svc.Spec.ClusterIP, svc.Spec.Selector)
	}
	if diff := cmp.Diff(sts.Spec.Selector.MatchLabels, svc.Spec.Selector); diff != "" {
		t.Errorf("the Service does not select the StatefulSet's pods (-StatefulSet +Service):\n%s", diff)
	}
	if db.Spec.Storage.String() != "20Gi" {
		t.Errorf("Sync changed the spec: storage %s", db.Spec.Storage)
	}
}

// Status: the endpoint and Secret's name always, ready replicas from a
// StatefulSet whose controller saw its generation, the migrated version
// from a completed run of the current version only; Ready=True with the
// operator's message, which Sync lets stand only once every child is
// ready.
func TestSyncStatus(t *testing.T) {
	sts := func(gen, observed int64, ready int32) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders", Generation: gen},
			Status:     appsv1.StatefulSetStatus{ObservedGeneration: observed, ReadyReplicas: ready},
		}
	}
	tests := []struct {
		name         string
		previous     string // status.migratedVersion before
		observed     reconciler.Children
		wantReady    int32
		wantMigrated string
	}{
		{"nothing yet", "", nil, 0, ""},
		{"rolling out", "", reconciler.Children{sts(1, 1, 1)}, 1, ""},
		{"a spec its controller has not seen", "", reconciler.Children{sts(2, 1, 1)}, 0, ""},
		{"migrated", "", reconciler.Children{sts(1, 1, 1), job("17.2", batchv1.JobComplete)}, 1, "17.2"},
		{"the previous version's run", "16.4", reconciler.Children{job("16.4", batchv1.JobComplete)}, 0, "16.4"},
		{"this version's run failed", "16.4", reconciler.Children{job("17.2", batchv1.JobFailed)}, 0, "16.4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := newDB(func(db *v1alpha1.Database) { db.Status.MigratedVersion = tt.previous })
			children(t, db, tt.observed)
			got := db.Status
			if got.ReadyReplicas != tt.wantReady || got.MigratedVersion != tt.wantMigrated ||
				got.Endpoint != "orders-0.orders.shop.svc:5432" || got.CredentialsSecret != "orders-credentials" {
				t.Errorf("status %+v; want %d ready replicas, migrated %q", got, tt.wantReady, tt.wantMigrated)
			}
			r := status.Get(db, status.Ready)
			if r == nil || r.Reason != database.ReasonAvailable || !strings.Contains(r.Message, "Job orders-migrate migrated to 17.2") {
				t.Errorf("Ready %+v", r)
			}
		})
	}
}

// A Database that cannot have valid children is a terminal error of Kind
// Invalid naming each bad field, and nothing is returned.
func TestSyncInvalid(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*v1alpha1.Database)
		want   []string
	}{
		{"dotted name", func(db *v1alpha1.Database) { db.Name = "orders.v2" },
			[]string{`metadata.name: Invalid value: "orders.v2": names the headless Service`}},
		{"long name", func(db *v1alpha1.Database) { db.Name = strings.Repeat("a", 53) },
			[]string{"metadata.name: Too long", "may not be more than 52"}},
		{"the operator's label", func(db *v1alpha1.Database) {
			db.Spec.Migration.PodLabels = map[string]string{"app.kubernetes.io/instance": "other"}
		}, []string{"spec.migration.podLabels[app.kubernetes.io/instance]: Forbidden: the operator sets this label itself"}},
		{"bad label and annotation", func(db *v1alpha1.Database) {
			db.Spec.Migration.PodLabels = map[string]string{"team": "a b"}
			db.Spec.Migration.PodAnnotations = map[string]string{"-bad": "x"}
		}, []string{"spec.migration.podLabels: Invalid value: \"a b\"", "spec.migration.podAnnotations: Invalid value: \"-bad\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := newDB(tt.mutate)
			desired, _, err := database.Sync(t.Context(), db, nil)
			if len(desired) > 0 {
				t.Errorf("%d children returned with the error", len(desired))
			}
			if !koperrors.IsTerminal(err) || koperrors.KindOf(err) != koperrors.Invalid {
				t.Fatalf("error %v: terminal %t, kind %s; want a terminal Invalid", err, koperrors.IsTerminal(err), koperrors.KindOf(err))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), "Database shop/"+db.Name) {
				t.Errorf("error %q does not name the Database", err)
			}
		})
	}
}

func resourceQuantity(t *testing.T, s string) resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

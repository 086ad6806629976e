package database

import (
	"crypto/rand"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kopgo/kopgo/examples/database/api/v1alpha1"
)

// Port is the PostgreSQL port, of the server pods and the Service.
const Port = 5432

// Keys of the credentials Secret.
const (
	UsernameKey = "username"
	PasswordKey = "password"
)

// Username is the database superuser the Secret names.
const Username = "postgres"

// Image is the server's image repository; the tag is Spec.Version.
const Image = "postgres"

// Child names. Every child is named after the Database (the Service and
// the StatefulSet by its name alone, so that pod <name>-0 resolves as
// <name>-0.<name>).

// SecretName is the name of the credentials Secret of db.
func SecretName(db *v1alpha1.Database) string { return db.Name + "-credentials" }

// JobName is the name of the migration Job of db.
func JobName(db *v1alpha1.Database) string { return db.Name + "-migrate" }

// InstanceLabel names the Database on every child and pod.
const InstanceLabel = "app.kubernetes.io/instance"

// labels are the labels of every child.
func labels(db *v1alpha1.Database) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "postgresql",
		InstanceLabel:                  db.Name,
		"app.kubernetes.io/managed-by": "kopgo-database",
	}
}

// serverLabels select the server pods: the Service's selector and the
// StatefulSet's. The component keeps the migration pod out of the Service.
func serverLabels(db *v1alpha1.Database) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":      "postgresql",
		InstanceLabel:                 db.Name,
		"app.kubernetes.io/component": "server",
	}
}

func replicas(db *v1alpha1.Database) int32 {
	if db.Spec.Replicas == nil {
		return 1
	}
	return *db.Spec.Replicas
}

func storage(db *v1alpha1.Database) resource.Quantity {
	if db.Spec.Storage == nil {
		return resource.MustParse("1Gi")
	}
	return *db.Spec.Storage
}

func image(db *v1alpha1.Database) string { return Image + ":" + db.Spec.Version }

// Endpoint is the address of pod <name>-0 through the headless Service.
func Endpoint(db *v1alpha1.Database) string {
	return fmt.Sprintf("%s-0.%s.%s.svc:%d", db.Name, db.Name, db.Namespace, Port)
}

// credentials is the Secret with the superuser's password: the one
// observed, or a new one if there is none. Sync creates it once
// (reconciler.CreateOnce) and never writes it again, so a new password
// generated here never replaces the stored one; returning the observed
// one keeps the desired children what they really are.
func credentials(db *v1alpha1.Database, observed *corev1.Secret) *corev1.Secret {
	password := []byte(rand.Text())
	if observed != nil && len(observed.Data[PasswordKey]) > 0 {
		password = observed.Data[PasswordKey]
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: SecretName(db), Labels: labels(db)},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{UsernameKey: []byte(Username), PasswordKey: password},
	}
}

// service is the headless Service in front of the server pods: no cluster
// IP, a DNS name per pod (<name>-0.<name>), as a StatefulSet needs.
func service(db *v1alpha1.Database) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: db.Name, Labels: labels(db)},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  serverLabels(db),
			Ports: []corev1.ServicePort{{
				Name: "postgres", Port: Port, TargetPort: intstr.FromString("postgres"), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}

// secretEnv is an environment variable read from the credentials Secret.
func secretEnv(db *v1alpha1.Database, name, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: SecretName(db)}, Key: key,
	}}}
}

// dataVolume names the volume claim template, and so the claims:
// data-<name>-<ordinal>.
const dataVolume = "data"

// statefulSet is the server: Spec.Replicas pods of postgres:<version>,
// each with a claim of Spec.Storage. The claims are deleted with the
// StatefulSet (WhenDeleted: Delete), so deleting the Database deletes its
// data, and kept when it scales down (WhenScaled: Retain), so scaling up
// again finds them.
func statefulSet(db *v1alpha1.Database) *appsv1.StatefulSet {
	const dataDir = "/var/lib/postgresql/data"
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: db.Name, Labels: labels(db)},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    new(replicas(db)),
			ServiceName: db.Name,
			Selector:    &metav1.LabelSelector{MatchLabels: serverLabels(db)},
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
				WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: serverLabels(db)},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "postgres",
					Image: image(db),
					Ports: []corev1.ContainerPort{{Name: "postgres", ContainerPort: Port, Protocol: corev1.ProtocolTCP}},
					Env: []corev1.EnvVar{
						{Name: "PGDATA", Value: dataDir + "/pgdata"},
						secretEnv(db, "POSTGRES_USER", UsernameKey),
						secretEnv(db, "POSTGRES_PASSWORD", PasswordKey),
					},
					VolumeMounts: []corev1.VolumeMount{{Name: dataVolume, MountPath: dataDir}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
						Exec: &corev1.ExecAction{Command: []string{"pg_isready", "--username", Username}},
					}},
				}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: dataVolume, Labels: serverLabels(db)},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: db.Spec.StorageClassName,
					Resources: corev1.VolumeResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceStorage: storage(db)},
					},
					// The API server's defaults, written out. volumeClaimTemplates
					// is an atomic list, so kopgo's Applier cannot prove an apply
					// unchanged by the values (the stored list has these two
					// defaults), and its ownership proof needs the cache to have
					// shown our apply's own resourceVersion, which the
					// StatefulSet controller's status write right after it often
					// skips: without them each status change of a rollout costs
					// another apply request (measured: 5 patches of the
					// StatefulSet while a Database is created, against 1).
					// (Argo CD users write the same to stop a perpetual diff.)
					VolumeMode: new(corev1.PersistentVolumeFilesystem),
				},
				Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
			}},
		},
	}
}

// DefaultMigrationCommand is the migration's command unless
// Spec.Migration.Command says otherwise: what PostgreSQL recommends after
// an upgrade, new statistics for the planner.
var DefaultMigrationCommand = []string{"vacuumdb", "--all", "--analyze-in-stages"}

// migrationJob is the Job that migrates db to Spec.Version. Sync runs it
// once per version (reconciler.RunOnce). A container that exits non-zero
// fails the Job at once (a pod failure policy, rather than the backoff
// limit's retries: a half-applied migration needs a person), and the
// Job's condition then names the container and its exit code; a pod lost
// to a disruption (a drained node) is retried.
func migrationJob(db *v1alpha1.Database) *batchv1.Job {
	m := db.Spec.Migration
	img := m.Image
	if img == "" {
		img = image(db)
	}
	command := m.Command
	if len(command) == 0 {
		command = DefaultMigrationCommand
	}
	podLabels := maps.Clone(m.PodLabels)
	if podLabels == nil {
		podLabels = map[string]string{}
	}
	maps.Copy(podLabels, labels(db)) // ours win: validate refuses the keys
	podLabels["app.kubernetes.io/component"] = "migration"
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: JobName(db), Labels: labels(db)},
		Spec: batchv1.JobSpec{
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					ContainerName: new("migrate"), Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{0},
				}},
				{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
					{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue},
				}},
			}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: maps.Clone(m.PodAnnotations)},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name:    "migrate",
						Image:   img,
						Command: command,
						Env: []corev1.EnvVar{
							{Name: "PGHOST", Value: fmt.Sprintf("%s-0.%s", db.Name, db.Name)},
							{Name: "PGPORT", Value: fmt.Sprint(Port)},
							secretEnv(db, "PGUSER", UsernameKey),
							secretEnv(db, "PGPASSWORD", PasswordKey),
							{Name: "DATABASE_VERSION", Value: db.Spec.Version},
						},
					}},
				},
			},
		},
	}
}

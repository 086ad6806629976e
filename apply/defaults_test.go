package apply_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	"github.com/kopgo/kopgo/test/widget"
)

// The API server fills in defaults inside what an intent sets: inside
// atomic fields, which are owned whole (a StatefulSet's volumeClaimTemplates
// get status.phase and spec.volumeMode, a downward-API fieldRef its
// apiVersion, a NetworkPolicy port its protocol), and in scalars a typed
// object sends as zero (a Service port's targetPort 0 becomes the port).
// None of that is a change: applying the same intent again sends nothing,
// also after someone else's write moved the resourceVersion (a controller's
// status write, here an annotation), and writes nothing after a restart.
func TestDefaultedFieldsAreNotChanges(t *testing.T) {
	ns := cluster.Namespace(t)
	informers := startCache(t, apply.KeepManagedFields(owner))
	for _, tt := range defaultedChildren(ns) {
		t.Run(tt.name, func(t *testing.T) {
			a, requests := newApplier(t, apply.WithCache(informers))
			key := tt.key()
			applyAs := func(a *apply.Applier, step string, want apply.Outcome, wantRequests int64) apply.Result {
				t.Helper()
				before := requests.all.Load()
				res, err := a.Apply(t.Context(), tt.intent())
				if err != nil {
					t.Fatalf("%s: %v", step, err)
				}
				if got := requests.all.Load() - before; res.Outcome != want || got != wantRequests {
					t.Errorf("%s = %s with %d requests, want %s with %d", step, res.Outcome, got, want, wantRequests)
				}
				return res
			}
			res := applyAs(a, "create", apply.Created, 1)
			waitCached(t, informers, key, res.Object().GetResourceVersion())
			applyAs(a, "apply again", apply.Unchanged, 0)

			// Someone else writes: the resourceVersion moves, our fields stay.
			patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"someone-else":"was-here"}}}`))
			written := key.DeepCopyObject().(client.Object)
			if err := cluster.Client().Patch(t.Context(), written, patch, client.FieldOwner("someone-else")); err != nil {
				t.Fatal(err)
			}
			waitCached(t, informers, key, written.GetResourceVersion())
			applyAs(a, "apply after their write", apply.Unchanged, 0)
			applyAs(a, "and again", apply.Unchanged, 0)

			// A restarted operator remembers nothing: the cached object's
			// values are all it has, and a default inside an atomic field may
			// cost one apply, which writes nothing; then nothing at all.
			b, bRequests := newApplier(t, apply.WithCache(informers))
			res, err := b.Apply(t.Context(), tt.intent())
			if err != nil || res.Outcome != apply.Unchanged || res.Requests > 1 {
				t.Errorf("apply after a restart = %s with %d requests, %v; want Unchanged with at most 1", res.Outcome, res.Requests, err)
			}
			requests = bRequests
			applyAs(b, "apply after a restart, again", apply.Unchanged, 0)

			final := key.DeepCopyObject().(client.Object)
			if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(key), final); err != nil {
				t.Fatal(err)
			}
			if final.GetResourceVersion() != written.GetResourceVersion() {
				t.Errorf("the object was written after their write: resourceVersion %s, was %s", final.GetResourceVersion(), written.GetResourceVersion())
			}
		})
	}
}

type defaultedChild struct {
	name   string
	intent func() any
	key    func() client.Object
}

// defaultedChildren are children whose API server defaults fall inside
// what they set, as operators write them.
func defaultedChildren(ns string) []defaultedChild {
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	labels := map[string]string{"app": "db"}
	podSpec := func() corev1.PodSpec {
		return corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "db",
				Image: "postgres:17",
				Ports: []corev1.ContainerPort{{Name: "pg", ContainerPort: 5432}},
				Env: []corev1.EnvVar{
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "MODE", Value: "primary"},
				},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
					TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("pg")},
				}},
				VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/db"}},
			}},
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}},
			}}},
		}
	}
	template := func() corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec()}
	}
	claim := corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	jobSpec := func() batchv1.JobSpec {
		t := template()
		t.Spec.RestartPolicy = corev1.RestartPolicyNever
		return batchv1.JobSpec{
			Template: t,
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:          batchv1.PodFailurePolicyActionIgnore,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}},
			}}},
		}
	}
	pathType := networkingv1.PathTypePrefix
	children := []defaultedChild{
		{"StatefulSet typed", func() any {
			return &appsv1.StatefulSet{ObjectMeta: meta("db"), Spec: appsv1.StatefulSetSpec{
				ServiceName: "db", Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template(),
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{claim},
			}}
		}, func() client.Object { return &appsv1.StatefulSet{ObjectMeta: meta("db")} }},
		{"StatefulSet apply configuration", func() any {
			return appsv1ac.StatefulSet("db-ac", ns).WithSpec(appsv1ac.StatefulSetSpec().
				WithServiceName("db").WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
				WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().WithContainers(
					corev1ac.Container().WithName("db").WithImage("postgres:17").
						WithEnv(corev1ac.EnvVar().WithName("POD_NAME").WithValueFrom(corev1ac.EnvVarSource().
							WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath("metadata.name"))))))).
				WithVolumeClaimTemplates(corev1ac.PersistentVolumeClaim("data", "").WithSpec(corev1ac.PersistentVolumeClaimSpec().
					WithAccessModes(corev1.ReadWriteOnce).
					WithResources(corev1ac.VolumeResourceRequirements().WithRequests(corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")})))))
		}, func() client.Object { return &appsv1.StatefulSet{ObjectMeta: meta("db-ac")} }},
		{"Deployment typed", func() any {
			return &appsv1.Deployment{ObjectMeta: meta("web"), Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template(),
			}}
		}, func() client.Object { return &appsv1.Deployment{ObjectMeta: meta("web")} }},
		{"DaemonSet typed", func() any {
			return &appsv1.DaemonSet{ObjectMeta: meta("agent"), Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template(),
			}}
		}, func() client.Object { return &appsv1.DaemonSet{ObjectMeta: meta("agent")} }},
		{"Job typed", func() any {
			return &batchv1.Job{ObjectMeta: meta("migrate"), Spec: jobSpec()}
		}, func() client.Object { return &batchv1.Job{ObjectMeta: meta("migrate")} }},
		{"CronJob typed", func() any {
			return &batchv1.CronJob{ObjectMeta: meta("backup"), Spec: batchv1.CronJobSpec{
				Schedule: "0 3 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: jobSpec()},
			}}
		}, func() client.Object { return &batchv1.CronJob{ObjectMeta: meta("backup")} }},
		{"Service typed", func() any {
			return &corev1.Service{ObjectMeta: meta("db"), Spec: corev1.ServiceSpec{
				Selector: labels, Ports: []corev1.ServicePort{{Name: "pg", Port: 5432}},
			}}
		}, func() client.Object { return &corev1.Service{ObjectMeta: meta("db")} }},
		{"Service apply configuration", func() any {
			return corev1ac.Service("db-ac", ns).WithSpec(corev1ac.ServiceSpec().WithSelector(labels).
				WithPorts(corev1ac.ServicePort().WithName("pg").WithPort(5432)))
		}, func() client.Object { return &corev1.Service{ObjectMeta: meta("db-ac")} }},
		{"Ingress typed", func() any {
			return &networkingv1.Ingress{ObjectMeta: meta("web"), Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
				Host: "web.example.com",
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: "/", PathType: &pathType,
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80},
					}},
				}}}},
			}}}}
		}, func() client.Object { return &networkingv1.Ingress{ObjectMeta: meta("web")} }},
		{"PersistentVolumeClaim typed", func() any {
			return &corev1.PersistentVolumeClaim{ObjectMeta: meta("data"), Spec: claim.Spec}
		}, func() client.Object { return &corev1.PersistentVolumeClaim{ObjectMeta: meta("data")} }},
		{"NetworkPolicy typed", func() any {
			port := intstr.FromInt32(5432)
			return &networkingv1.NetworkPolicy{ObjectMeta: meta("db"), Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: labels},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{
					Ports: []networkingv1.NetworkPolicyPort{{Port: &port}},
					From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "app"}}}},
				}},
			}}
		}, func() client.Object { return &networkingv1.NetworkPolicy{ObjectMeta: meta("db")} }},
		// No schema here for a custom resource, so no proof by values
		// (one request after a restart); the ownership proof needs none.
		{"Widget typed", func() any {
			w := &widget.Widget{ObjectMeta: meta("gizmo"), Spec: widget.WidgetSpec{Size: 3}}
			w.SetGroupVersionKind(widget.GroupVersion.WithKind("Widget"))
			return w
		}, func() client.Object { return &widget.Widget{ObjectMeta: meta("gizmo")} }},
	}
	for i := range children {
		children[i].name = strings.ReplaceAll(children[i].name, " ", "-")
	}
	return children
}

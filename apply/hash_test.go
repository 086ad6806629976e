package apply

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func hashOf(t *testing.T, obj any, opts ...client.ApplyOption) digest {
	t.Helper()
	in, err := toIntent(obj, clientgoscheme.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hashIntent(in, applyOptions("owner", opts))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func hashDeployment(mutate func(d *appsv1.Deployment)) *appsv1.Deployment {
	labels := map[string]string{"app": "web", "tier": "front"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "nginx:1.27", Args: []string{"--port=8080"},
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
						corev1.ResourceMemory: resource.MustParse("128Mi"), corev1.ResourceCPU: resource.MustParse("500m"),
					}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
						HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")},
					}},
				}}},
			},
		},
	}
	if mutate != nil {
		mutate(d)
	}
	return d
}

// Equal intents hash equal, built apart; intents that would send different
// JSON hash apart.
func TestHashIntent(t *testing.T) {
	base := hashOf(t, hashDeployment(nil))
	if got := hashOf(t, hashDeployment(nil)); got != base {
		t.Error("equal Deployments hash apart")
	}
	differ := []struct {
		name   string
		mutate func(d *appsv1.Deployment)
	}{
		{"image", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28" }},
		{"label value", func(d *appsv1.Deployment) { d.Labels = map[string]string{"app": "web", "tier": "back"} }},
		{"label key", func(d *appsv1.Deployment) { d.Labels = map[string]string{"app": "web", "tiers": "front"} }},
		{"one label more", func(d *appsv1.Deployment) { d.Labels = map[string]string{"app": "web", "tier": "front", "x": ""} }},
		{"replicas", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](3) }},
		{"replicas unset", func(d *appsv1.Deployment) { d.Spec.Replicas = nil }},
		{"replicas zero", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](0) }},
		{"an argument more", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Args = append(d.Spec.Template.Spec.Containers[0].Args, "-v")
		}},
		{"memory", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("256Mi")
		}},
		{"probe port", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Port = intstr.FromInt32(8080)
		}},
		{"a time", func(d *appsv1.Deployment) { d.CreationTimestamp = metav1.NewTime(time.Unix(1, 0)) }},
	}
	for _, tt := range differ {
		if hashOf(t, hashDeployment(tt.mutate)) == base {
			t.Errorf("%s: changed Deployment hashes as before", tt.name)
		}
	}
	if hashOf(t, hashDeployment(nil), client.FieldOwner("other")) == base || hashOf(t, hashDeployment(nil), Force(true)) == base {
		t.Error("another field owner or Force hashes as before")
	}

	// A quantity hashes as its JSON: 1Gi parsed or built.
	parsed := hashDeployment(func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("1Gi")
	})
	built := hashDeployment(func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = *resource.NewQuantity(1<<30, resource.BinarySI)
	})
	if hashOf(t, parsed) != hashOf(t, built) {
		t.Error("1Gi parsed and built hash apart")
	}

	// Apply configurations and unstructured objects.
	ac := func(v string) any { return corev1ac.ConfigMap("cm", "ns").WithData(map[string]string{"k": v}) }
	if one, again, two := hashOf(t, ac("1")), hashOf(t, ac("1")), hashOf(t, ac("2")); one != again || one == two {
		t.Error("apply configurations: equal hash apart, or different alike")
	}
	u := func(v any) any {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "cm", "namespace": "ns"}, "data": map[string]any{"k": v}}}
	}
	if one, again, two, none := hashOf(t, u("1")), hashOf(t, u("1")), hashOf(t, u("2")), hashOf(t, u(nil)); one != again || one == two || one == none {
		t.Error("unstructured objects: equal hash apart, or different alike")
	}
	if hashOf(t, u("1")) == hashOf(t, ac("1")) {
		t.Error("an unstructured object and an apply configuration hash alike")
	}
}

// A type the walk cannot take is hashed by its JSON.
func TestHashIntentFallsBackToJSON(t *testing.T) {
	type odd struct {
		corev1.ConfigMap `json:",inline"`
		Hook             func() `json:"-"`
	}
	in := &intent{input: &odd{ConfigMap: corev1.ConfigMap{Data: map[string]string{"k": "v"}}}}
	a, err := hashIntent(in, applyOptions("owner", nil))
	if err != nil {
		t.Fatal(err)
	}
	in.input.(*odd).Hook = func() {}
	if b, err := hashIntent(in, applyOptions("owner", nil)); err != nil || a != b {
		t.Errorf("hash with a skipped func field = %x, %v; want %x", b, err, a)
	}
}

// Hashing a converged typed Deployment allocates nothing.
func TestHashIntentAllocations(t *testing.T) {
	in, err := toIntent(hashDeployment(nil), clientgoscheme.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	o := applyOptions("owner", nil)
	if n := testing.AllocsPerRun(100, func() { _, _ = hashIntent(in, o) }); n > 0 {
		t.Errorf("hashIntent allocates %v times", n)
	}
}

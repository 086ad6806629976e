package apply_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
)

// BenchmarkApplyUnchanged applies an unchanged child over and over:
// controller-runtime's plain client.Apply (one request each time) against
// an Applier with a cache (none), for a ConfigMap apply configuration and
// for a typed Deployment (what reconciler.Sync applies). "restarted" forgets
// the object before each apply, as a restarted operator has, so the cache's
// copy and its managedFields are the only proof. All report requests/op.
func BenchmarkApplyUnchanged(b *testing.B) {
	ns := cluster.Namespace(b)
	intent := configMapAC(ns, "bench", map[string]string{"k": "v"})
	b.Run("client.Apply", func(b *testing.B) {
		// An apply configuration of its own: client.Apply decodes the
		// server's answer into it (resourceVersion included), which would
		// make the Applier's intent a precondition.
		intent := configMapAC(ns, "bench", map[string]string{"k": "v"})
		cfg, requests := counted()
		c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Apply(b.Context(), intent, client.FieldOwner(owner)); err != nil {
			b.Fatal(err)
		}
		requests.all.Store(0)
		b.ResetTimer()
		for b.Loop() {
			if err := c.Apply(b.Context(), intent, client.FieldOwner(owner)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(requests.all.Load())/float64(b.N), "requests/op")
	})
	informers := startCache(b, apply.KeepManagedFields(owner))
	children := []struct {
		name   string
		intent any
		key    client.Object
	}{
		{"ConfigMap", intent, cmKey(ns, "bench")},
		{"Deployment", benchDeployment(ns), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bench"}}},
	}
	for _, child := range children {
		for _, restarted := range []bool{false, true} {
			name := "Applier-with-cache/" + child.name
			if restarted {
				name += "/restarted"
			}
			b.Run(name, func(b *testing.B) {
				cfg, requests := counted()
				a, err := apply.New(cfg, owner, apply.WithCache(informers))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := a.Apply(b.Context(), child.intent); err != nil {
					b.Fatal(err)
				}
				live := child.key.DeepCopyObject().(client.Object)
				if err := cluster.Client().Get(b.Context(), client.ObjectKeyFromObject(live), live); err != nil {
					b.Fatal(err)
				}
				waitCached(b, informers, child.key.DeepCopyObject().(client.Object), live.GetResourceVersion())
				requests.all.Store(0)
				b.ResetTimer()
				for b.Loop() {
					if restarted {
						a.Forget(child.key)
					}
					res, err := a.Apply(b.Context(), child.intent)
					if err != nil {
						b.Fatal(err)
					}
					if res.Outcome != apply.Unchanged {
						b.Fatalf("outcome %s, want Unchanged", res.Outcome)
					}
				}
				b.ReportMetric(float64(requests.all.Load())/float64(b.N), "requests/op")
			})
		}
	}
}

// benchDeployment is a typed Deployment as an operator builds one.
func benchDeployment(ns string) *appsv1.Deployment {
	labels := map[string]string{"app.kubernetes.io/name": "bench", "app.kubernetes.io/managed-by": "kopgo"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bench", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "web",
					Image: "nginx:1.27",
					Args:  []string{"--port=8080"},
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
					Env:   []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
						HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")},
					}},
				}}},
			},
		},
	}
}

// BenchmarkApplyConverged is the apply of a converged reconcile: the
// desired child, built anew as a reconciler builds it each time, applied to
// an object the cache holds at the version the Applier's last apply left.
// No request is sent; what is measured is the Applier's own work.
func BenchmarkApplyConverged(b *testing.B) {
	ns := cluster.Namespace(b)
	informers := startCache(b, apply.KeepManagedFields(owner))
	children := []struct {
		name  string
		build func() any
		key   client.Object
	}{
		{"typed-Deployment", func() any { return benchDeployment(ns) }, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bench"}}},
		{"ConfigMap-apply-configuration", func() any { return configMapAC(ns, "bench", map[string]string{"k": "v"}) }, cmKey(ns, "bench")},
	}
	for _, child := range children {
		b.Run(child.name, func(b *testing.B) {
			a, err := apply.New(cluster.Config, owner, apply.WithCache(informers))
			if err != nil {
				b.Fatal(err)
			}
			res, err := a.Apply(b.Context(), child.build())
			if err != nil {
				b.Fatal(err)
			}
			waitCached(b, informers, child.key.DeepCopyObject().(client.Object), res.Object().GetResourceVersion())
			b.ResetTimer()
			for b.Loop() {
				res, err := a.Apply(b.Context(), child.build())
				if err != nil {
					b.Fatal(err)
				}
				if res.Outcome != apply.Unchanged || res.Requests != 0 {
					b.Fatalf("%s with %d requests, want Unchanged with none", res.Outcome, res.Requests)
				}
			}
		})
	}
}

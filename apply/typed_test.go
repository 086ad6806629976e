package apply_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
)

// A Deployment applied as a typed object with nil replicas, next to an "HPA"
// (another field manager applying spec.replicas): applying ours again never
// takes them back, and the typed struct's zero values (status,
// creationTimestamp: null, empty non-pointer structs) are not owned by us,
// while what we set is.
func TestTypedObjectDoesNotOwnUnsetFields(t *testing.T) {
	ns := cluster.Namespace(t)
	informers := startCache(t)
	tests := []struct {
		name string
		opts []apply.ApplierOption
		// After the HPA's write: with a cache the Applier sees that the
		// cached Deployment still holds every field it owns, so it sends
		// nothing; without one it only knows that the version moved since
		// its last apply.
		want     []apply.Outcome
		requests []int64
	}{
		{"with cache", []apply.ApplierOption{apply.WithCache(informers)}, []apply.Outcome{apply.Unchanged, apply.Unchanged}, []int64{0, 0}},
		{"without cache", nil, []apply.Outcome{apply.Updated, apply.Unchanged}, []int64{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, requests := newApplier(t, tt.opts...)
			name := strings.ReplaceAll(tt.name, " ", "-")
			d := typedDeployment(ns, name)
			res, err := a.Apply(t.Context(), d)
			if err != nil || res.Outcome != apply.Created {
				t.Fatalf("first apply = %s, %v; want Created", res.Outcome, err)
			}
			// The HPA applies without Force: it would conflict if we owned
			// replicas.
			hpa := appsv1ac.Deployment(name, ns).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(5))
			if err := cluster.Client().Apply(t.Context(), hpa, client.FieldOwner("hpa")); err != nil {
				t.Fatalf("HPA apply: %v", err)
			}
			waitCached(t, informers, &appsv1.Deployment{ObjectMeta: d.ObjectMeta}, *hpa.ResourceVersion)
			for i, want := range tt.want {
				before := requests.all.Load()
				res, err := a.Apply(t.Context(), d)
				if got := requests.all.Load() - before; err != nil || res.Outcome != want || got != tt.requests[i] {
					t.Errorf("apply %d after the HPA = %s with %d requests, %v; want %s with %d", i+1, res.Outcome, got, err, want, tt.requests[i])
				}
			}
			if d.Spec.Replicas != nil || d.Kind != "" || d.ResourceVersion != "" {
				t.Errorf("Apply modified its input: replicas %v, kind %q, resourceVersion %q", d.Spec.Replicas, d.Kind, d.ResourceVersion)
			}
			var got appsv1.Deployment
			if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(d), &got); err != nil {
				t.Fatal(err)
			}
			if *got.Spec.Replicas != 5 {
				t.Errorf("replicas = %d, want the HPA's 5", *got.Spec.Replicas)
			}
			assertOwned(t, got.ManagedFields,
				[]string{`"f:selector"`, `"f:image"`, `"f:labels"`},
				[]string{`"f:replicas"`, `"f:status"`, `"f:creationTimestamp"`, `"f:strategy"`, `"f:resources"`, `"f:terminationMessagePath"`})
		})
	}
}

func typedDeployment(ns, name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
}

// assertOwned checks which fields our field manager owns.
func assertOwned(t *testing.T, managed []metav1.ManagedFieldsEntry, wanted, unwanted []string) {
	t.Helper()
	var ours string
	for _, mf := range managed {
		if mf.Manager == owner {
			ours = mf.FieldsV1.GetRawString()
		}
	}
	if ours == "" {
		t.Fatalf("no managed fields for %s in %v", owner, managed)
	}
	for _, f := range unwanted {
		if strings.Contains(ours, f) {
			t.Errorf("%s owns %s: %s", owner, f, ours)
		}
	}
	for _, f := range wanted {
		if !strings.Contains(ours, f) {
			t.Errorf("%s does not own %s: %s", owner, f, ours)
		}
	}
}

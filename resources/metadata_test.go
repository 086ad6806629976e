package resources_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kopgo/kopgo/resources"
	"github.com/kopgo/kopgo/scope"
)

func deployment(ns, name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": name, "mine": "1"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
}

func TestLabelsDoNotConflictWithOtherWriters(t *testing.T) {
	ns := cluster.Namespace(t)
	if err := cluster.Client().Create(t.Context(), deployment(ns, "web")); err != nil {
		t.Fatal(err)
	}
	c, tr := countedClient(t)
	mine, err := resources.Get[appsv1.Deployment](t.Context(), c, scope.Namespaced(ns), "web")
	if err != nil {
		t.Fatal(err)
	}

	// Someone else scales it and adds a label after we read: mine is stale.
	theirs := mine.DeepCopy()
	theirs.Spec.Replicas = ptr.To[int32](5)
	theirs.Labels["theirs"] = "1"
	if err := cluster.Client().Update(t.Context(), theirs); err != nil {
		t.Fatal(err)
	}
	tr.Reset()

	steps := []struct {
		name        string
		run         func() (bool, error)
		wantChanged bool
	}{
		{"SetLabels on a stale object", func() (bool, error) {
			return resources.SetLabels(t.Context(), c, mine, map[string]string{"tier": "web", "app": "web"})
		}, true},
		{"SetLabels again", func() (bool, error) {
			return resources.SetLabels(t.Context(), c, mine, map[string]string{"tier": "web"})
		}, false},
		{"RemoveLabels", func() (bool, error) { return resources.RemoveLabels(t.Context(), c, mine, "mine", "absent", "mine") }, true},
		{"RemoveLabels of absent keys", func() (bool, error) { return resources.RemoveLabels(t.Context(), c, mine, "absent") }, false},
		{"SetAnnotations", func() (bool, error) {
			return resources.SetAnnotations(t.Context(), c, mine, map[string]string{"example.com/note": "x", "example.com/other": "y"})
		}, true},
		{"RemoveAnnotations", func() (bool, error) { return resources.RemoveAnnotations(t.Context(), c, mine, "example.com/note") }, true},
	}
	for _, st := range steps {
		changed, err := st.run()
		if err != nil || changed != st.wantChanged {
			t.Fatalf("%s = %t, %v; want %t, nil", st.name, changed, err, st.wantChanged)
		}
		want := int64(0)
		if st.wantChanged {
			want = 1
		}
		if n := requests(tr); n != want {
			t.Errorf("%s sent %d requests, want %d", st.name, n, want)
		}
	}

	got, err := resources.Get[appsv1.Deployment](t.Context(), cluster.Client(), scope.Namespaced(ns), "web")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"app": "web", "theirs": "1", "tier": "web"}, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if *got.Spec.Replicas != 5 {
		t.Errorf("replicas = %d, want their 5", *got.Spec.Replicas)
	}
	for _, key := range []string{"example.com/note"} {
		if _, ok := got.Annotations[key]; ok {
			t.Errorf("annotation %s was not removed", key)
		}
	}
	if got.Annotations["example.com/other"] != "y" {
		t.Errorf("annotations = %v, want example.com/other=y kept", got.Annotations)
	}
	// obj holds the server's answer.
	if diff := cmp.Diff(got.Labels, mine.Labels); diff != "" || mine.ResourceVersion != got.ResourceVersion {
		t.Errorf("obj after the patches is not the server's object (-server +obj):\n%s", diff)
	}
}

package e2e_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	kopmeta "github.com/kopgo/kopgo/meta"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/gc"
)

// Pruning a Deployment its parent no longer wants removes the Deployment;
// kube-controller-manager's garbage collector then removes its ReplicaSets
// and Pods, while the wanted Deployment keeps running.
func TestPruneCascadesToPods(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "parent"}}
	if err := c.Create(t.Context(), parent); err != nil {
		t.Fatal(err)
	}
	sel := map[string]string{"example.com/parent": "parent"}
	for _, name := range []string{"keep", "drop"} {
		d := deployment(ns, name, 2)
		d.Labels = sel
		d.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: parent.Name, UID: parent.UID, Controller: new(true)}}
		if err := c.Create(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 60*time.Second, "4 pods running", func(ctx context.Context) error {
		return podsRunning(ctx, c, ns, 4)
	})

	deployGVK := appsv1.SchemeGroupVersion.WithKind("Deployment")
	res, err := gc.Prune(t.Context(), c, parent, labels.SelectorFromSet(sel), []schema.GroupVersionKind{deployGVK},
		[]kopmeta.ObjectRef{{Group: deployGVK.Group, Kind: deployGVK.Kind, Namespace: ns, Name: "keep"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Deleted) != 1 || res.Deleted[0].Name != "drop" {
		t.Fatalf("Deleted = %v, want the drop Deployment", res.Deleted)
	}
	eventually(t, 60*time.Second, "the dropped Deployment's ReplicaSets and Pods cascade away", func(ctx context.Context) error {
		var rss appsv1.ReplicaSetList
		if err := c.List(ctx, &rss, client.InNamespace(ns), client.MatchingLabels{"app": "drop"}); err != nil {
			return err
		}
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": "drop"}); err != nil {
			return err
		}
		if len(rss.Items)+len(pods.Items) > 0 {
			return fmt.Errorf("%d ReplicaSets and %d Pods left", len(rss.Items), len(pods.Items))
		}
		return nil
	})
	if err := podsRunning(t.Context(), c, ns, 2); err != nil {
		t.Errorf("the wanted Deployment: %v", err)
	}
}

func deployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
			},
		},
	}
}

func podsRunning(ctx context.Context, c client.Client, ns string, want int) error {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return err
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			running++
		}
	}
	if running != want {
		return fmt.Errorf("%d pods running, want %d", running, want)
	}
	return nil
}

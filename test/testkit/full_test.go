package testkit_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// eventually polls cond every 100ms until it returns nil or timeout passes,
// then fails the test with the last error.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	var last error
	for {
		if last = cond(ctx); last == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not reached within %s: %v", what, timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
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
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
}

func TestDeploymentBecomesAvailableOnKwokNodes(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	d := deployment(ns, "web", 3)
	if err := c.Create(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "Deployment Available with 3 ready replicas", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return err
		}
		for _, cond := range d.Status.Conditions {
			if cond.Type == appsv1.DeploymentAvailable && cond.Status == corev1.ConditionTrue && d.Status.ReadyReplicas == 3 {
				return nil
			}
		}
		return errorf("status %+v", d.Status)
	})

	var pods corev1.PodList
	if err := c.List(t.Context(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s: node %q phase %s, want scheduled and Running", p.Name, p.Spec.NodeName, p.Status.Phase)
		}
	}
}

func TestOwnerDeletionCascades(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}}
	if err := c.Create(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	child := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: "child",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}},
	}}
	if err := c.Create(t.Context(), child); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "child garbage-collected", func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKeyFromObject(child), &corev1.Secret{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errorf("child still there (get error %v)", err)
	})
}

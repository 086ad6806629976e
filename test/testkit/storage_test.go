package testkit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/test/testkit"
)

func statefulSet(ns, name string, replicas int32) *appsv1.StatefulSet {
	labels := map[string]string{"app": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    new(replicas),
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "db", Image: "postgres:17",
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/postgresql/data"}},
				}}},
			},
			// No storageClassName: the cluster's default class serves it.
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}
}

// A StatefulSet with a volumeClaimTemplate rolls out: each replica's claim
// is provisioned by the default StorageClass and bound, and its pod becomes
// Ready. Deleting a claim whose volume has reclaim policy Delete deletes the
// volume.
func TestStatefulSetWithVolumeClaimsRollsOut(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	sts := statefulSet(ns, "db", 3)
	if err := c.Create(t.Context(), sts); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "StatefulSet with 3 ready replicas", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(sts), sts); err != nil {
			return err
		}
		if sts.Status.ObservedGeneration != sts.Generation || sts.Status.ReadyReplicas != 3 || sts.Status.AvailableReplicas != 3 {
			return errorf("status %+v", sts.Status)
		}
		return nil
	})

	volumes := map[string]string{} // claim name: volume name
	for i := range 3 {
		var pvc corev1.PersistentVolumeClaim
		key := client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("data-db-%d", i)}
		if err := c.Get(t.Context(), key, &pvc); err != nil {
			t.Fatal(err)
		}
		if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "" {
			t.Fatalf("claim %s: phase %s, volume %q, want Bound to a volume", key.Name, pvc.Status.Phase, pvc.Spec.VolumeName)
		}
		if got := ptrValue(pvc.Spec.StorageClassName); got != testkit.StorageClassName {
			t.Errorf("claim %s: storage class %q, want the default %q", key.Name, got, testkit.StorageClassName)
		}
		var pv corev1.PersistentVolume
		if err := c.Get(t.Context(), client.ObjectKey{Name: pvc.Spec.VolumeName}, &pv); err != nil {
			t.Fatal(err)
		}
		if pv.Status.Phase != corev1.VolumeBound || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID {
			t.Errorf("volume %s: phase %s, claim %+v, want Bound to %s", pv.Name, pv.Status.Phase, pv.Spec.ClaimRef, key.Name)
		}
		if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
			t.Errorf("volume %s: reclaim policy %s, want Delete", pv.Name, pv.Spec.PersistentVolumeReclaimPolicy)
		}
		if size := pv.Spec.Capacity[corev1.ResourceStorage]; size.Cmp(resource.MustParse("1Gi")) != 0 {
			t.Errorf("volume %s: capacity %s, want 1Gi", pv.Name, size.String())
		}
		volumes[key.Name] = pv.Name
	}

	// The claims outlive the StatefulSet (its default retention policy);
	// once its pods are gone, a claim is no longer in use and can go.
	if err := c.Delete(t.Context(), sts, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the StatefulSet's pods gone", func(ctx context.Context) error {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": "db"}); err != nil {
			return err
		}
		if len(pods.Items) > 0 {
			return errorf("%d pods left", len(pods.Items))
		}
		return nil
	})
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data-db-0"}}
	if err := c.Delete(t.Context(), claim); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "claim data-db-0 and its volume deleted", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(claim), claim); !apierrors.IsNotFound(err) {
			return errorf("claim still there (get error %v)", err)
		}
		var pv corev1.PersistentVolume
		err := c.Get(ctx, client.ObjectKey{Name: volumes["data-db-0"]}, &pv)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errorf("volume %s still there, phase %s (get error %v)", volumes["data-db-0"], pv.Status.Phase, err)
	})
	var pv corev1.PersistentVolume
	if err := c.Get(t.Context(), client.ObjectKey{Name: volumes["data-db-1"]}, &pv); err != nil || pv.Status.Phase != corev1.VolumeBound {
		t.Errorf("volume of data-db-1: phase %s, error %v; want it Bound still", pv.Status.Phase, err)
	}
}

// A claim of a class with Immediate binding is bound without a pod; a
// volume whose reclaim policy is Retain stays, Released, after its claim
// is deleted, while a Delete one goes.
func TestVolumeReclaimPolicies(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	immediate, reclaim := storagev1.VolumeBindingImmediate, corev1.PersistentVolumeReclaimRetain
	retain := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: ns + "-retain"},
		Provisioner:       testkit.ProvisionerName,
		VolumeBindingMode: &immediate,
		ReclaimPolicy:     &reclaim,
	}
	if err := c.Create(t.Context(), retain); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), retain) })

	claims := map[string]*corev1.PersistentVolumeClaim{}
	for name, class := range map[string]string{"delete": testkit.ImmediateStorageClassName, "retain": retain.Name} {
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{
				StorageClassName: &class,
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100Mi")}},
			},
		}
		if err := c.Create(t.Context(), pvc); err != nil {
			t.Fatal(err)
		}
		claims[class] = pvc
	}
	for _, pvc := range claims {
		eventually(t, 60*time.Second, "claim "+pvc.Name+" bound without a pod", func(ctx context.Context) error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(pvc), pvc); err != nil {
				return err
			}
			if pvc.Status.Phase != corev1.ClaimBound {
				return errorf("phase %s", pvc.Status.Phase)
			}
			return nil
		})
	}
	for _, pvc := range claims {
		if err := c.Delete(t.Context(), pvc); err != nil {
			t.Fatal(err)
		}
	}
	deleted := claims[testkit.ImmediateStorageClassName].Spec.VolumeName
	eventually(t, 60*time.Second, "the Delete volume deleted", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKey{Name: deleted}, &corev1.PersistentVolume{}); !apierrors.IsNotFound(err) {
			return errorf("volume %s still there (get error %v)", deleted, err)
		}
		return nil
	})
	kept := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: claims[retain.Name].Spec.VolumeName}}
	t.Cleanup(func() { _ = c.Delete(context.Background(), kept) })
	eventually(t, 60*time.Second, "the Retain volume Released", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(kept), kept); err != nil {
			return err
		}
		if kept.Status.Phase != corev1.VolumeReleased {
			return errorf("phase %s", kept.Status.Phase)
		}
		return nil
	})
}

func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

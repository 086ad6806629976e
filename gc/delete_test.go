package gc_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/gc"
)

// Delete deletes typed objects the caller holds, as Collect would: a plain
// one goes, one re-created under its name since it was read is left alone,
// and one waiting on finalizers loses only ours and is reported stuck.
// It counts requests: no list is sent.
func TestDeleteObjectsAlreadyRead(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	plain := create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}})
	held := create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held", Finalizers: []string{ours, foreign}}})
	stale := create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stale"}})
	staleCopy := stale.DeepCopy()
	if err := c.Delete(t.Context(), stale); err != nil {
		t.Fatal(err)
	}
	fresh := create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stale"}})

	cfg, traffic := cluster.CountedConfig()
	counted, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	// Warm-up: a new client's first request also sends discovery.
	if err := counted.Get(t.Context(), client.ObjectKeyFromObject(fresh), &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	traffic.Reset()
	res, err := gc.Delete(t.Context(), counted, []client.Object{plain, held, staleCopy}, gc.OwnedFinalizers{ours})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"plain", "held"}, names(res.Deleted)); diff != "" {
		t.Errorf("Deleted (-want +got):\n%s", diff)
	}
	if len(res.Stuck) != 1 || res.Stuck[0].Name != "held" || !cmp.Equal(res.Stuck[0].Finalizers, []string{foreign}) {
		t.Errorf("Stuck = %+v, want held waiting on %s", res.Stuck, foreign)
	}
	// plain: delete; held: delete, read, patch; stale: the refused delete.
	if n := traffic.Requests.Load(); n != 5 {
		t.Errorf("%d requests, want 5 (no list)", n)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(plain), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("plain: Get = %v, want NotFound", err)
	}
	var got corev1.ConfigMap
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(fresh), &got); err != nil || got.UID != fresh.UID {
		t.Errorf("the re-created object: %v, uid %s (want %s)", err, got.UID, fresh.UID)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(held), &got); err != nil || !cmp.Equal(got.Finalizers, []string{foreign}) {
		t.Errorf("held: %v, finalizers %v (want only %s)", err, got.Finalizers, foreign)
	}
}

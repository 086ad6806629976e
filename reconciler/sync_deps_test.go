package reconciler_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// Dependencies gate writes, not existence: once created, a CreateOnce child
// that depends on a Deployment does not wait again when the Deployment
// rolls out anew (it will never be written again), while an in-place child
// with the same dependency and a new desired state waits for it.
func TestSyncDependencyGatesOnlyWrites(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&appsv1.Deployment{}, &corev1.ConfigMap{}})
	db := deployment("db")
	version := "1"
	h.setDesired(func(*widget.Widget) []client.Object {
		return []client.Object{
			db,
			reconciler.Child(configMap("once", map[string]string{"v": version}), reconciler.CreateOnce, reconciler.DependsOn{db}),
			reconciler.Child(configMap("kept", map[string]string{"v": version}), reconciler.DependsOn{db}),
		}
	})
	h.reconcile()
	setDeploymentStatus(t, h.ns, "db", rolledOut)
	h.settle(inNs(h.ns, deployment("db")))
	h.reconcile()
	once, kept := inNs(h.ns, configMap("once", nil)), inNs(h.ns, configMap("kept", nil))
	get(t, once)
	get(t, kept)
	h.settle(once, kept)

	// The Deployment rolls out again (a new generation not yet observed)
	// and both children get a new desired state.
	setDeploymentStatus(t, h.ns, "db", func(d *appsv1.Deployment) { d.Status.ObservedGeneration = d.Generation - 1 })
	h.settle(inNs(h.ns, deployment("db")))
	version = "2"
	h.reconcile()

	get(t, once)
	get(t, kept)
	if once.Data["v"] != "1" {
		t.Errorf("the CreateOnce child was rewritten: %v", once.Data)
	}
	if kept.Data["v"] != "1" {
		t.Errorf("the in-place child was written while its dependency rolled out: %v", kept.Data)
	}
	w := h.getWidget()
	rec := conditionOf(w, status.Reconciling)
	if !strings.Contains(rec, "kept waits for Deployment") {
		t.Errorf("Reconciling = %s; want the in-place child waiting for the Deployment", rec)
	}
	if strings.Contains(rec, "once waits") {
		t.Errorf("Reconciling = %s; the existing CreateOnce child waits for its dependency", rec)
	}
}

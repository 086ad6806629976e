package reconciler_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// A child that depends on a child Sync refused (its name is taken) is not
// written, and the parent's Stalled message says which and why, next to
// the refusal.
func TestSyncHoldsBackWhatDependsOnARefusedChild(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}})
	taken := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "taken"}, Data: map[string]string{"theirs": "1"}}
	if err := cluster.Client().Create(t.Context(), taken); err != nil {
		t.Fatal(err)
	}
	h.settle(taken)
	h.setDesired(func(*widget.Widget) []client.Object {
		return []client.Object{
			reconciler.Child(configMap("user", nil), reconciler.DependsOn{configMap("taken", nil)}),
			configMap("taken", map[string]string{"mine": "1"}),
		}
	})
	h.reconcile() // terminal: reported in status

	err := cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: h.ns, Name: "user"}, &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the child depending on a refused one: Get = %v, want NotFound", err)
	}
	w := h.getWidget()
	stalled := status.Get(w, status.Stalled)
	if stalled == nil || stalled.Status != metav1.ConditionTrue {
		t.Fatalf("Stalled = %v, want True", stalled)
	}
	for _, want := range []string{
		"desired child ConfigMap " + h.ns + "/taken: the object of that name has no controller",
		"desired children ConfigMap " + h.ns + "/user not written: they depend on ConfigMap " + h.ns + "/taken, which Sync refused",
	} {
		if !strings.Contains(stalled.Message, want) {
			t.Errorf("Stalled message %q does not say %q", stalled.Message, want)
		}
	}
}

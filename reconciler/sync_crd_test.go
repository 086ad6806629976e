package reconciler_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// A custom resource as a child: Sync creates it with the controller
// reference and the owner label, the parent's Ready follows the child's own
// Ready condition (kstatus), and an unchanged sync sends nothing, though
// the apply package has no schema for the kind (the record and ownership
// proofs need none).
func TestSyncCustomResourceChild(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&widget.Widget{}})
	h.setDesired(func(w *widget.Widget) []client.Object {
		return []client.Object{&widget.Widget{ObjectMeta: metav1.ObjectMeta{Name: "part"}, Spec: widget.WidgetSpec{Size: w.Spec.Size * 10}}}
	})
	h.reconcile()
	part := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "part"}}
	get(t, part)
	parent := h.getWidget()
	if ref := metav1.GetControllerOf(part); ref == nil || ref.UID != parent.UID || ref.Kind != "Widget" {
		t.Fatalf("child's controller = %+v, want the parent %s", ref, parent.UID)
	}
	if part.Spec.Size != 10 || len(part.Labels) == 0 {
		t.Errorf("child spec %+v, labels %v", part.Spec, part.Labels)
	}

	// The child's conditions as kstatus reads them: Ready=False is in
	// progress, Stalled=True failed.
	setConditions := func(conds ...metav1.Condition) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var cur widget.Widget
			if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(part), &cur); err != nil {
				return err
			}
			cur.Status.ObservedGeneration = cur.Generation
			cur.Status.Conditions = nil
			for _, c := range conds {
				status.Set(&cur, c)
			}
			return cluster.Client().Status().Update(t.Context(), &cur)
		})
		if err != nil {
			t.Fatal(err)
		}
		h.settle(part)
		h.reconcile()
	}
	for _, step := range []struct {
		conds []metav1.Condition
		want  string
	}{
		{[]metav1.Condition{{Type: status.Ready, Status: metav1.ConditionFalse, Reason: "Starting", Message: "warming up"}},
			"Unknown/ChildProgressing: Widget part: Ready=False: Starting: warming up"},
		{[]metav1.Condition{{Type: status.Ready, Status: metav1.ConditionFalse, Reason: "Broken", Message: "disk full"}, {Type: status.Stalled, Status: metav1.ConditionTrue, Reason: "Broken", Message: "disk full"}},
			"False/ChildFailed: Widget part"},
		{[]metav1.Condition{{Type: status.Ready, Status: metav1.ConditionTrue, Reason: "Working"}},
			"True/ChildrenReady: 1 of 1 children ready: Widget part"},
	} {
		setConditions(step.conds...)
		if got := conditionOf(h.getWidget(), status.Ready); !strings.HasPrefix(got, step.want) {
			t.Errorf("child %v: parent Ready = %s, want prefix %s", step.conds, got, step.want)
		}
	}

	h.settle(part)
	h.traffic.Reset()
	h.reconcile()
	if n := h.traffic.Requests.Load(); n != 0 {
		t.Errorf("an unchanged sync of a custom resource child sent %d requests, want 0", n)
	}
}

package status_test

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// condition is a complete condition for a writer other than kopgo.
func condition(t, s, reason, message string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(s), Reason: reason, Message: message,
		LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))}
}

// writeAs replaces w's conditions as stored with conds, by an Update of the
// status subresource as field manager manager: what `kubectl edit`
// (manager "kubectl-edit") and an operator's Status().Update do.
func writeAs(t *testing.T, w *widget.Widget, manager string, change func(*widget.Widget)) {
	t.Helper()
	cur := read(t, w)
	change(cur)
	if err := cluster.Client().Status().Update(t.Context(), cur, client.FieldOwner(manager)); err != nil {
		t.Fatalf("status update as %s: %v", manager, err)
	}
}

// reconcileWith is one reconcile of a plain reconciler with outcome err,
// from the object as stored, written as the field owner.
func reconcileWith(t *testing.T, w *widget.Widget, err error) {
	t.Helper()
	cur := read(t, w)
	p := status.NewPatcher(cur)
	status.SetError(cur, err)
	if _, perr := p.Patch(t.Context(), cluster.Client(), cur, client.FieldOwner(owner)); perr != nil {
		t.Fatalf("patch: %v", perr)
	}
}

func condTypes(conds []metav1.Condition) []string {
	var out []string
	for _, c := range conds {
		out = append(out, c.Type+"="+string(c.Status))
	}
	return out
}

// Ready, Reconciling and Stalled are kopgo's whoever wrote them last: a
// Stalled=True left by `kubectl edit`, by an operator's Status().Update,
// or by an edit of kopgo's own Stalled, is gone after the next successful
// status write; a condition of another type, another manager's, stays as
// it was.
func TestOwnedConditionsWhoeverWroteThem(t *testing.T) {
	synced := condition("Synced", "True", "Synced", "in sync with the upstream")
	tests := map[string]func(t *testing.T, w *widget.Widget){
		"kubectl edit adds Stalled": func(t *testing.T, w *widget.Widget) {
			t.Helper()
			reconcileWith(t, w, nil) // kopgo wrote Ready=True first
			writeAs(t, w, "kubectl-edit", func(cur *widget.Widget) {
				cur.Status.Conditions = append(cur.Status.Conditions, condition("Stalled", "True", "Edited", "by hand"))
			})
		},
		"an operator's Status().Update wrote the whole status": func(t *testing.T, w *widget.Widget) {
			t.Helper()
			writeAs(t, w, "cronjob-operator", func(cur *widget.Widget) {
				cur.Status.Conditions = append(cur.Status.Conditions, // next to Synced
					condition("Ready", "False", "Failed", "old operator"),
					condition("Stalled", "True", "Failed", "old operator"))
			})
		},
		"an operator's Stalled, taken over by kopgo's own": func(t *testing.T, w *widget.Widget) {
			t.Helper()
			writeAs(t, w, "cronjob-operator", func(cur *widget.Widget) {
				cur.Status.Conditions = append(cur.Status.Conditions, condition("Stalled", "True", "Failed", "old operator"))
			})
			// kopgo's Stalled too: the fields of the same value (type,
			// status, lastTransitionTime) are then owned by both.
			reconcileWith(t, w, koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "spec.size: too large")))
		},
		"kubectl edit changes kopgo's own Stalled": func(t *testing.T, w *widget.Widget) {
			t.Helper()
			reconcileWith(t, w, koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "spec.size: too large")))
			writeAs(t, w, "kubectl-edit", func(cur *widget.Widget) {
				status.Get(cur, status.Stalled).Message = "edited by hand"
			})
		},
	}
	for name, before := range tests {
		t.Run(name, func(t *testing.T) {
			w := newWidget(t, "owned")
			writeAs(t, w, "synced-controller", func(cur *widget.Widget) {
				cur.Status.Conditions = append(cur.Status.Conditions, synced)
			})
			before(t, w)
			if got := read(t, w); status.Get(got, status.Stalled) == nil {
				t.Fatalf("setup: no Stalled stored: %v", condTypes(got.Status.Conditions))
			}
			reconcileWith(t, w, nil)
			got := read(t, w)
			if c := status.Get(got, status.Stalled); c != nil {
				t.Errorf("Stalled still stored after a successful status write: %+v (conditions %v)", *c, condTypes(got.Status.Conditions))
			}
			if r := status.Get(got, status.Ready); r == nil || r.Status != metav1.ConditionTrue {
				t.Errorf("Ready = %+v, want True", r)
			}
			i := slices.IndexFunc(got.Status.Conditions, func(c metav1.Condition) bool { return c.Type == "Synced" })
			if i < 0 {
				t.Fatalf("Synced, another manager's condition, removed: %v", condTypes(got.Status.Conditions))
			}
			if s := got.Status.Conditions[i]; s.Status != synced.Status || s.Reason != synced.Reason || s.Message != synced.Message || !s.LastTransitionTime.Equal(&synced.LastTransitionTime) {
				t.Errorf("Synced changed: %+v, want %+v", s, synced)
			}
			// And a converged write costs nothing again.
			cur := read(t, w)
			p := status.NewPatcher(cur)
			status.SetError(cur, nil)
			if sent, err := p.Patch(t.Context(), cluster.Client(), cur, client.FieldOwner(owner)); err != nil || sent {
				t.Errorf("the next write: sent %v, %v; want nothing", sent, err)
			}
		})
	}
}

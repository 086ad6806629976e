package apply_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/status"
)

// A refused takeover is one verdict wherever it is met: terminal for
// koperrors.IsTerminal and for controller-runtime, so status.SetError shows
// Stalled with a message naming the holder (the other controller, or the
// field manager that wrote an orphan). Only the two refusals that time
// resolves (an object controlled by a deleted predecessor of the owner, an
// object that appeared during the apply) are retried as ordinary failures.
func TestTakeoverRefusalIsTerminalAndNamesTheHolder(t *testing.T) {
	ns := cluster.Namespace(t)
	ours := newParent(t, ns, "parent")
	theirs := newParent(t, ns, "their-parent")
	orphan := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orphan"}, Data: map[string]string{"k": "theirs"}}
	if err := cluster.Client().Create(t.Context(), orphan, client.FieldOwner("hand-made")); err != nil {
		t.Fatal(err)
	}
	controlled := childTyped(ns, "controlled", theirs, nil)
	if err := cluster.Client().Create(t.Context(), controlled, client.FieldOwner("their-controller")); err != nil {
		t.Fatal(err)
	}
	a, _ := newApplier(t)

	type verdict struct {
		Terminal, CRTerminal bool
		Stalled              metav1.ConditionStatus
		Reason               string
	}
	for _, tc := range []struct {
		name  string
		child string
		names []string // in the message and the Stalled condition
	}{
		{"orphan", "orphan", []string{`written by "hand-made"`, "no controller", "apply.AdoptOrphans(true)"}},
		{"controlled by another", "controlled", []string{"controlled by ConfigMap their-parent (uid " + string(theirs.UID) + ")"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a.Apply(t.Context(), childAC(ns, tc.child, ours, map[string]string{"k": "v"}))
			if _, ok := errors.AsType[*apply.TakeoverError](err); !ok {
				t.Fatalf("apply = %v, want a TakeoverError", err)
			}
			obj := &conditioned{}
			status.SetError(obj, err)
			stalled := status.Get(obj, status.Stalled)
			got := verdict{Terminal: koperrors.IsTerminal(err), CRTerminal: errors.Is(err, reconcile.TerminalError(nil))}
			if stalled != nil {
				got.Stalled, got.Reason = stalled.Status, stalled.Reason
			}
			want := verdict{Terminal: true, CRTerminal: true, Stalled: metav1.ConditionTrue, Reason: "Invalid"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("verdict on %v (-want +got):\n%s", err, diff)
			}
			for _, s := range tc.names {
				if stalled == nil || !strings.Contains(stalled.Message, s) {
					t.Errorf("Stalled message %v does not say %q", stalled, s)
				}
			}
		})
	}

	// The refusals that resolve themselves are not terminal.
	earlier := ours
	earlier.UID = "0b1d0000-dead-4000-8000-000000000000"
	for name, terr := range map[string]*apply.TakeoverError{
		"earlier owner, since deleted": {Owner: ours, Controller: &earlier},
		"appeared during the apply":    {Owner: ours, Appeared: true, Manager: "someone"},
	} {
		t.Run(name, func(t *testing.T) {
			err := koperrors.WrapKind(koperrors.Invalid, terr, "apply", kopmeta.RefOf(controlled))
			if koperrors.IsTerminal(err) || errors.Is(err, reconcile.TerminalError(nil)) {
				t.Errorf("%v is terminal, want it retried", err)
			}
		})
	}
}

// conditioned is a bare status.Setter.
type conditioned struct {
	corev1.ConfigMap
	conds []metav1.Condition
}

func (c *conditioned) GetConditions() []metav1.Condition   { return c.conds }
func (c *conditioned) SetConditions(cs []metav1.Condition) { c.conds = cs }

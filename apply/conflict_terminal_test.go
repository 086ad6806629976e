package apply_test

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
)

// A field-manager conflict is a verdict, as a refused takeover is:
// terminal for koperrors.IsTerminal and for controller-runtime (through
// reconciler.Result too), Stalled with a message that names the field, the
// manager, and both ways out.
func TestConflictIsTerminal(t *testing.T) {
	ns := cluster.Namespace(t)
	a, _ := newApplier(t)
	if err := cluster.Client().Apply(t.Context(), configMapAC(ns, "cm", map[string]string{"k": "theirs"}), client.FieldOwner("other-manager")); err != nil {
		t.Fatal(err)
	}
	_, err := a.Apply(t.Context(), configMapAC(ns, "cm", map[string]string{"k": "ours"}))
	if !koperrors.IsTerminal(err) || !errors.Is(err, reconcile.TerminalError(nil)) {
		t.Errorf("conflict %v: IsTerminal %v, controller-runtime terminal %v; want both", err, koperrors.IsTerminal(err), errors.Is(err, reconcile.TerminalError(nil)))
	}
	if res, rerr := reconciler.Result(reconciler.Done(), err); !errors.Is(rerr, reconcile.TerminalError(nil)) || res.RequeueAfter != 0 {
		t.Errorf("reconciler.Result = %+v, %v; want a terminal error", res, rerr)
	}
	obj := &conditioned{}
	status.SetError(obj, err)
	stalled := status.Get(obj, status.Stalled)
	if stalled == nil || stalled.Status != metav1.ConditionTrue {
		t.Fatalf("Stalled = %+v, want True", stalled)
	}
	for _, want := range []string{".data.k", `"other-manager"`, "apply.Force(true)", "stop setting them"} {
		if !strings.Contains(stalled.Message, want) {
			t.Errorf("Stalled message %q does not say %q", stalled.Message, want)
		}
	}
}

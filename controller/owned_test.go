package controller_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// A Stalled=True that `kubectl edit` (an Update by "kubectl-edit") left
// on an object kopgo's loop keeps Ready is gone after the loop's next
// successful reconcile; a condition of another type, another manager's,
// is left as it was.
func TestLoopRemovesAStalledSomeoneElseWrote(t *testing.T) {
	ns := cluster.Namespace(t)
	run(t, kopcontroller.New[*widget.Widget]("owned-conditions", reconciler.Func[*widget.Widget](
		func(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
			return reconciler.Done(), nil
		})).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	w := createWidget(t, ns, "edited", ns)
	eventually(t, 30*time.Second, "Ready", func() error {
		if !status.IsTrue(getWidget(t, w), status.Ready) {
			return fmt.Errorf("not Ready yet")
		}
		return nil
	})
	hourAgo := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	synced := metav1.Condition{Type: "Synced", Status: metav1.ConditionTrue, Reason: "Synced", Message: "upstream", LastTransitionTime: hourAgo}
	cur := getWidget(t, w)
	cur.Status.Conditions = append(cur.Status.Conditions, synced,
		metav1.Condition{Type: status.Stalled, Status: metav1.ConditionTrue, Reason: "Edited", Message: "by hand", LastTransitionTime: hourAgo})
	if err := cluster.Client().Status().Update(t.Context(), cur, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	cur = getWidget(t, w)
	cur.Spec.Size++ // a reason to reconcile
	if err := cluster.Client().Update(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "Stalled gone after the next reconcile", func() error {
		got := getWidget(t, w)
		if got.Status.ObservedGeneration != got.Generation {
			return fmt.Errorf("generation %d not reconciled yet", got.Generation)
		}
		if c := status.Get(got, status.Stalled); c != nil {
			return fmt.Errorf("Stalled=%s %s stored next to Ready=%v", c.Status, c.Reason, status.IsTrue(got, status.Ready))
		}
		return nil
	})
	got := getWidget(t, w)
	i := slices.IndexFunc(got.Status.Conditions, func(c metav1.Condition) bool { return c.Type == "Synced" })
	if i < 0 {
		t.Fatalf("Synced removed: %+v", got.Status.Conditions)
	}
	if s := got.Status.Conditions[i]; s.Status != synced.Status || s.Message != synced.Message || !s.LastTransitionTime.Equal(&hourAgo) {
		t.Errorf("Synced changed: %+v", s)
	}
	if !status.IsTrue(got, status.Ready) {
		t.Errorf("Ready not True: %+v", status.Get(got, status.Ready))
	}
}

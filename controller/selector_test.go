package controller_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// With Setup, LabelSelector is a predicate on the primary watch, and the
// manager's cache holds every Widget: an owned child's change enqueues its
// parent whatever the parent's labels. A Widget outside the selector must
// still not be reconciled (another shard's, another operator's): no call,
// no status, no finalizer. Before the loop checked the selector, its
// child's update ran the reconciler for it.
func TestLabelSelectorUnderSetupLeavesOthersAlone(t *testing.T) {
	ns := cluster.Namespace(t)
	mgr := newManager(t)
	calls := map[string]*atomic.Int32{"mine": {}, "other": {}}
	r := reconciler.Func[*widget.Widget](func(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
		if n, ok := calls[w.Name]; ok {
			n.Add(1)
		}
		return reconciler.Done(), nil
	})
	err := kopcontroller.New[*widget.Widget](fmt.Sprintf("selector-setup-%d", completeRuns.Add(1)), r).
		Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop=" + ns).
		Owns(&corev1.ConfigMap{}).Setup(mgr)
	if err != nil {
		t.Fatal(err)
	}
	startManager(t, mgr)
	mine := createWidget(t, ns, "mine", ns)
	other := createWidget(t, ns, "other", "someone-else")
	eventually(t, 30*time.Second, "mine Ready", readyIs(t, mine, metav1.ConditionTrue, ""))

	// A child of the other Widget changes: its event maps to that Widget.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other-child"}, Data: map[string]string{"v": "1"}}
	if err := controllerutil.SetControllerReference(other, cm, scheme); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client().Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "2"
	if err := cluster.Client().Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	// The same for mine, as the witness that child events arrive.
	before := calls["mine"].Load()
	mineChild := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine-child"}}
	if err := controllerutil.SetControllerReference(mine, mineChild, scheme); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client().Create(t.Context(), mineChild); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "a reconcile of mine after its child's event", func() error {
		if calls["mine"].Load() == before {
			return fmt.Errorf("no reconcile of mine yet")
		}
		return nil
	})
	time.Sleep(time.Second) // the other child's events were sent before mine's
	if n := calls["other"].Load(); n != 0 {
		t.Errorf("the Widget outside the selector was reconciled %d times", n)
	}
	got := &widget.Widget{}
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(other), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Finalizers) != 0 || status.Get(got, status.Ready) != nil {
		t.Errorf("the Widget outside the selector got finalizers %v and Ready %+v", got.Finalizers, status.Get(got, status.Ready))
	}
}

// An object the controller took on (its finalizer is on) and that then
// left the selector (someone changed its labels) still gets its cleanup
// when it is deleted, and goes: skipping it as out of scope would leave
// it stuck on the finalizer.
func TestObjectThatLeftTheSelectorIsStillCleanedUp(t *testing.T) {
	ns := cluster.Namespace(t)
	mgr := newManager(t)
	h := newCleanupHook()
	err := kopcontroller.New[*widget.Widget](fmt.Sprintf("selector-cleanup-%d", completeRuns.Add(1)), h).
		Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop=" + ns).Setup(mgr)
	if err != nil {
		t.Fatal(err)
	}
	startManager(t, mgr)
	w := createWidget(t, ns, "leaves", ns)
	eventually(t, 30*time.Second, "the finalizer on", func() error {
		if len(getWidget(t, w).Finalizers) == 0 {
			return fmt.Errorf("no finalizer yet")
		}
		return nil
	})
	cur := getWidget(t, w)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur = getWidget(t, w) // the loop's status write may come after the finalizer
		cur.Labels["loop"] = "elsewhere"
		return cluster.Client().Update(t.Context(), cur)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client().Delete(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the Widget gone after its cleanup", func() error {
		err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(w), &widget.Widget{})
		if err == nil {
			return fmt.Errorf("still there")
		}
		return client.IgnoreNotFound(err)
	})
	// At least once: a reconcile queued before the finalizer came off may
	// read a cache that still shows it (as the reconciler doc says).
	if n := h.cleanups(); n < 1 {
		t.Errorf("%d cleanups, want at least 1", n)
	}
}

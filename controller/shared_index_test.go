package controller_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/widget"
)

// Two Syncer controllers on one manager whose children are of the same
// kind (an operator with two resources that both own Secrets, say): both
// Setups succeed, the kind is indexed by controller once, and each
// controller's Sync sees its own children only.
func TestTwoSyncersShareAChildKind(t *testing.T) {
	ns := cluster.Namespace(t)
	mgr := newManager(t)
	observed := map[string]*atomic.Int32{}
	for _, suffix := range []string{"a", "b"} {
		n := new(atomic.Int32)
		observed[suffix] = n
		s := reconciler.Sync([]client.Object{&corev1.ConfigMap{}},
			func(_ context.Context, w *widget.Widget, seen reconciler.Children) ([]client.Object, reconciler.Action, error) {
				n.Store(int32(len(seen)))
				return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.Name + "-" + suffix}, Data: map[string]string{"by": suffix}}}, reconciler.Done(), nil
			}, reconciler.WithOwnerLabel("shared-index.kopgo.dev/"+suffix))
		b := kopcontroller.New[*widget.Widget](fmt.Sprintf("shared-index-%s-%d", suffix, completeRuns.Add(1)), s).
			Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop=" + ns).FinalizerName("kopgo.dev/shared-" + suffix)
		if err := b.Setup(mgr); err != nil {
			t.Fatalf("Setup of controller %s: %v", suffix, err)
		}
	}
	startManager(t, mgr)
	w := createWidget(t, ns, "w", ns)
	for _, suffix := range []string{"a", "b"} {
		eventually(t, 30*time.Second, "child "+suffix, func() error {
			return cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "w-" + suffix}, &corev1.ConfigMap{})
		})
	}
	eventually(t, 30*time.Second, "Ready", readyIs(t, w, metav1.ConditionTrue, ""))
	// Touch the parent: each controller observes its own child, not both.
	eventually(t, 30*time.Second, "each controller observes its one child", func() error {
		cur := getWidget(t, w)
		cur.Labels["touch"] = fmt.Sprint(time.Now().UnixNano())
		if err := cluster.Client().Update(t.Context(), cur); err != nil {
			return err
		}
		time.Sleep(500 * time.Millisecond)
		if a, b := observed["a"].Load(), observed["b"].Load(); a != 1 || b != 1 {
			return fmt.Errorf("observed children: a %d, b %d; want 1 each", a, b)
		}
		return nil
	})
}

package controller_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopcontroller "github.com/kopgo/kopgo/controller"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// makeThenFail is a reconciler with a Cleanup whose first Reconcile of
// each object runs make (which may write something) and then fails
// terminally.
type makeThenFail struct {
	make    func(ctx context.Context, w *widget.Widget, env *reconciler.Env) error
	mu      sync.Mutex
	cleaned map[types.UID]int
}

func (r *makeThenFail) Reconcile(ctx context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
	if r.make != nil {
		if err := r.make(ctx, w, env); err != nil {
			return reconciler.Done(), err
		}
	}
	return reconciler.Done(), koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "spec.size: refused for good"))
}

func (r *makeThenFail) Cleanup(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleaned[w.UID]++
	return reconciler.Done(), nil
}

func (r *makeThenFail) cleanups(uid types.UID) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cleaned[uid]
}

// A terminal failure of the reconcile that added the finalizer removes it
// again only when that reconcile made nothing: a reconcile that wrote
// through Env.Client or Env.Applier keeps the finalizer, so that deleting
// the object runs its Cleanup (once); one that wrote nothing leaves no
// finalizer behind on an object that owns nothing.
func TestTerminalFailureKeepsTheFinalizerOnlyWhenSomethingWasMade(t *testing.T) {
	cases := []struct {
		name      string
		make      func(ctx context.Context, w *widget.Widget, env *reconciler.Env) error
		finalizer bool
	}{
		{name: "nothing made", finalizer: false},
		{name: "Env.Client create", finalizer: true, make: func(ctx context.Context, w *widget.Widget, env *reconciler.Env) error {
			err := env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + "-made"}})
			return client.IgnoreAlreadyExists(err)
		}},
		{name: "Applier apply", finalizer: true, make: func(ctx context.Context, w *widget.Widget, env *reconciler.Env) error {
			_, err := env.Applier.Apply(ctx, corev1ac.ConfigMap(w.Name+"-applied", w.Namespace).WithData(map[string]string{"k": "v"}))
			return err
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			r := &makeThenFail{make: tc.make, cleaned: map[types.UID]int{}}
			run(t, kopcontroller.New[*widget.Widget](fmt.Sprintf("terminal-finalizer-%d", i), r).
				Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
			w := createWidget(t, ns, "w", ns)
			var got *widget.Widget
			eventually(t, 20*time.Second, "Stalled=True", func() error {
				got = getWidget(t, w)
				if c := status.Get(got, status.Stalled); c == nil || c.Status != metav1.ConditionTrue {
					return fmt.Errorf("Stalled = %+v", c)
				}
				if has := len(got.Finalizers) > 0; has != tc.finalizer {
					return fmt.Errorf("finalizers %v, want a finalizer: %t", got.Finalizers, tc.finalizer)
				}
				return nil
			})
			if err := cluster.Client().Delete(t.Context(), got); err != nil {
				t.Fatal(err)
			}
			eventually(t, 20*time.Second, "the object gone", func() error {
				err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(w), &widget.Widget{})
				if !apierrors.IsNotFound(err) {
					return fmt.Errorf("get: %w", err)
				}
				return nil
			})
			want := 0
			if tc.finalizer {
				want = 1
			}
			if n := r.cleanups(got.UID); n != want {
				t.Errorf("%d Cleanups, want %d", n, want)
			}
		})
	}
}

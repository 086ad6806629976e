package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// syncOperator runs a Sync controller for the Widgets of one namespace, as
// an operator would (its own manager, the controller Builder), and lets the
// test change what the sync function returns.
type syncOperator struct {
	mu      sync.Mutex
	desired func(w *widget.Widget) []client.Object
}

func (o *syncOperator) set(f func(w *widget.Widget) []client.Object) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.desired = f
}

func startSync(t *testing.T, ns string, kinds []client.Object, desired func(w *widget.Widget) []client.Object) *syncOperator {
	t.Helper()
	op := &syncOperator{desired: desired}
	mgr, err := manager.New(cluster.Config, manager.Options{
		Scheme:  cluster.Scheme(),
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	syncer := reconciler.Sync(kinds, func(_ context.Context, w *widget.Widget, _ reconciler.Children) ([]client.Object, reconciler.Action, error) {
		op.mu.Lock()
		defer op.mu.Unlock()
		return op.desired(w), reconciler.Done(), nil
	})
	b := kopcontroller.New[*widget.Widget](ns, syncer)
	for _, k := range syncer.ChildKinds() {
		b = b.Owns(k)
	}
	if err := b.Setup(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return op
}

// conditionHistory watches the Widget ns/name and records each distinct
// "Type=Status/Reason" of the given condition types, in order.
func conditionHistory(t *testing.T, ns, name string, types ...string) func() []string {
	t.Helper()
	wc, err := client.NewWithWatch(cluster.Config, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	w, err := wc.Watch(ctx, &widget.WidgetList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			obj, ok := ev.Object.(*widget.Widget)
			if !ok || obj.Name != name {
				continue
			}
			var parts []string
			for _, ct := range types {
				if c := status.Get(obj, ct); c != nil {
					parts = append(parts, ct+"="+string(c.Status)+"/"+c.Reason)
				}
			}
			s := strings.Join(parts, ",")
			mu.Lock()
			if len(seen) == 0 || seen[len(seen)-1] != s {
				seen = append(seen, s)
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); cancel(); <-done })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

func newWidget(t *testing.T, ns, name string) *widget.Widget {
	t.Helper()
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := cluster.Client().Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

// A desired child whose name a pre-existing object holds is refused: the
// parent is Stalled and says why, the object is not adopted, and deleting
// the parent (the garbage collector at work) deletes the parent's own
// children but not that object.
func TestSyncNeverDeletesWhatItDidNotCreate(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	taken := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken"}, Data: map[string]string{"theirs": "1"}}
	if err := c.Create(t.Context(), taken); err != nil {
		t.Fatal(err)
	}
	startSync(t, ns, []client.Object{&corev1.ConfigMap{}}, func(*widget.Widget) []client.Object {
		return []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "taken"}, Data: map[string]string{"mine": "1"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mine"}},
		}
	})
	w := newWidget(t, ns, "w")

	eventually(t, 30*time.Second, "the parent Stalled, naming the object", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return err
		}
		st := status.Get(w, status.Stalled)
		if st == nil || st.Status != metav1.ConditionTrue || !strings.Contains(st.Message, "ConfigMap "+ns+"/taken: the object of that name has no controller") {
			return fmt.Errorf("Stalled = %+v", st)
		}
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mine"}, &corev1.ConfigMap{})
	})
	if err := c.Delete(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the garbage collector deletes the parent's own child", func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mine"}, &corev1.ConfigMap{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("ConfigMap mine still exists")
	})
	var got corev1.ConfigMap
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(taken), &got); err != nil {
		t.Fatalf("the pre-existing object: %v", err)
	}
	if got.ResourceVersion != taken.ResourceVersion || len(got.OwnerReferences) > 0 {
		t.Errorf("the pre-existing object was written: owners %v, labels %v, data %v", got.OwnerReferences, got.Labels, got.Data)
	}
}

func webDeployment(nodeSelector map[string]string) *appsv1.Deployment {
	d := deployment("", "web", 2)
	if nodeSelector != nil {
		d.Spec.Template.Spec.NodeSelector = nodeSelector
		d.Spec.ProgressDeadlineSeconds = new(int32(5))
	}
	return d
}

// A parent with a Deployment child is Reconciling while the Deployment
// rolls out and Ready once it has; a rollout that cannot finish (its pods
// fit no node) makes it Ready=False naming the Deployment once the progress
// deadline passes.
func TestSyncReportsChildRollout(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	history := conditionHistory(t, ns, "w", status.Ready, status.Reconciling)
	op := startSync(t, ns, []client.Object{&appsv1.Deployment{}}, func(*widget.Widget) []client.Object {
		return []client.Object{webDeployment(nil)}
	})
	w := newWidget(t, ns, "w")
	eventually(t, 60*time.Second, "the parent Ready once the Deployment rolled out", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return err
		}
		if !status.IsTrue(w, status.Ready) {
			return fmt.Errorf("Ready = %+v; seen %v", status.Get(w, status.Ready), history())
		}
		return podsRunning(ctx, c, ns, 2)
	})
	if seen := history(); !slices.ContainsFunc(seen, func(s string) bool { return strings.Contains(s, "Reconciling=True/ChildProgressing") }) {
		t.Errorf("conditions seen %v: never Reconciling while the Deployment rolled out", seen)
	}

	op.set(func(*widget.Widget) []client.Object {
		return []client.Object{webDeployment(map[string]string{"kopgo.dev/no-such-node": "x"})}
	})
	w.Spec.Size = 2 // a change of the parent, so that it syncs now
	if err := c.Update(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "the parent Ready=False naming the Deployment", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return err
		}
		r := status.Get(w, status.Ready)
		if r == nil || r.Status != metav1.ConditionFalse || r.Reason != "ChildFailed" || !strings.Contains(r.Message, "Deployment web") {
			return fmt.Errorf("Ready = %+v; seen %v", r, history())
		}
		return nil
	})
}

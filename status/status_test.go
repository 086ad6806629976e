package status_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, widget.AddToScheme} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	testkit.Main(m, testkit.Options{Scheme: scheme, CRDs: []*apiextensionsv1.CustomResourceDefinition{widget.CRD()}},
		func(c *testkit.Cluster) { cluster = c })
}

const owner = "widget-controller"

func newWidget(t *testing.T) *widget.Widget {
	t.Helper()
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace(t), Name: "w"}, Spec: widget.WidgetSpec{Size: 1}}
	if err := cluster.Client().Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

func countingClient(t *testing.T) (client.Client, *atomic.Int64) {
	t.Helper()
	cfg, traffic := cluster.CountedConfig()
	c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c, &traffic.Requests
}

// The same status patched 100 times: one write, then no request, no new
// resourceVersion and no watch event.
func TestPatchUnchangedSendsNothing(t *testing.T) {
	w := newWidget(t)
	c, requests := countingClient(t)
	watcher, err := client.NewWithWatch(cluster.Config, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}

	p := status.NewPatcher(w)
	status.MarkReady(w, "Deployed", "all good")
	w.Status.Phase = "Running"
	if changed, err := p.Patch(t.Context(), c, w, owner); err != nil || !changed {
		t.Fatalf("first Patch = %t, %v", changed, err)
	}
	var stored widget.Widget
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(w), &stored); err != nil {
		t.Fatal(err)
	}
	rv := stored.ResourceVersion
	events, err := watcher.Watch(t.Context(), &widget.WidgetList{}, client.InNamespace(w.Namespace),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
	if err != nil {
		t.Fatal(err)
	}
	defer events.Stop()

	before := requests.Load()
	for range 100 {
		obj := stored.DeepCopyObject().(*widget.Widget)
		p := status.NewPatcher(obj)
		status.MarkReady(obj, "Deployed", "all good")
		obj.Status.Phase = "Running"
		if changed, err := p.Patch(t.Context(), c, obj, owner); err != nil || changed {
			t.Fatalf("Patch of an unchanged status = %t, %v", changed, err)
		}
	}
	if n := requests.Load() - before; n != 0 {
		t.Errorf("%d requests for 100 unchanged patches, want 0", n)
	}
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(w), &stored); err != nil {
		t.Fatal(err)
	}
	if stored.ResourceVersion != rv {
		t.Errorf("resourceVersion moved from %s to %s", rv, stored.ResourceVersion)
	}
	select {
	case ev := <-events.ResultChan():
		t.Errorf("watch event %s after unchanged patches", ev.Type)
	case <-time.After(500 * time.Millisecond):
	}
}

// Conditions and scalar fields travel together: changing one never drops
// the other, a removed condition goes, and a status write leaves the
// generation alone.
func TestPatchKeepsFieldsTogether(t *testing.T) {
	w := newWidget(t)
	c := cluster.Client()
	gen := w.Generation
	steps := []struct {
		name   string
		change func(*widget.Widget)
		want   func(*testing.T, *widget.Widget)
	}{
		{"reconciling and a phase", func(w *widget.Widget) {
			status.MarkReconciling(w, "Progressing", "rolling out")
			w.Status.Phase = "Pending"
		}, func(t *testing.T, w *widget.Widget) {
			t.Helper()
			if w.Status.Phase != "Pending" || status.Get(w, status.Reconciling) == nil || status.Get(w, status.Ready).Status != metav1.ConditionUnknown {
				t.Errorf("status %+v", w.Status)
			}
		}},
		{"only the phase", func(w *widget.Widget) { w.Status.Phase = "Running" }, func(t *testing.T, w *widget.Widget) {
			t.Helper()
			if w.Status.Phase != "Running" || status.Get(w, status.Reconciling) == nil {
				t.Errorf("conditions dropped by a scalar change: %+v", w.Status)
			}
		}},
		{"ready removes reconciling", func(w *widget.Widget) { status.MarkReady(w, "Deployed", "") }, func(t *testing.T, w *widget.Widget) {
			t.Helper()
			if w.Status.Phase != "Running" || status.Get(w, status.Reconciling) != nil || !status.IsReady(w) {
				t.Errorf("status %+v", w.Status)
			}
		}},
	}
	for _, s := range steps {
		p := status.NewPatcher(w)
		s.change(w)
		if _, err := p.Patch(t.Context(), c, w, owner); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		var got widget.Widget
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(w), &got); err != nil {
			t.Fatal(err)
		}
		t.Run(s.name, func(t *testing.T) { s.want(t, &got) })
		if got.Generation != gen {
			t.Errorf("%s: generation %d, want %d (status writes do not bump it)", s.name, got.Generation, gen)
		}
		w = &got
	}
}

func TestSetKeepsTransitionTimeAndOrder(t *testing.T) {
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	status.Set(w, metav1.Condition{Type: "Zeta", Status: metav1.ConditionTrue, Reason: "A"})
	status.Set(w, metav1.Condition{Type: status.Stalled, Status: metav1.ConditionTrue, Reason: "A"})
	status.Set(w, metav1.Condition{Type: "Alpha", Status: metav1.ConditionTrue, Reason: "A"})
	status.Set(w, metav1.Condition{Type: status.Ready, Status: metav1.ConditionFalse, Reason: "A"})
	var order []string
	for _, c := range w.Status.Conditions {
		order = append(order, c.Type)
		if c.ObservedGeneration != 3 {
			t.Errorf("%s observedGeneration %d, want 3", c.Type, c.ObservedGeneration)
		}
	}
	if diff := cmp.Diff([]string{"Ready", "Stalled", "Alpha", "Zeta"}, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	ltt := metav1.NewTime(time.Now().Add(-time.Hour))
	status.Get(w, status.Ready).LastTransitionTime = ltt
	if !status.Set(w, metav1.Condition{Type: status.Ready, Status: metav1.ConditionFalse, Reason: "B", Message: "new message"}) {
		t.Error("a new reason is a change")
	}
	if got := status.Get(w, status.Ready).LastTransitionTime; !got.Equal(&ltt) {
		t.Errorf("lastTransitionTime moved on a message change: %v", got)
	}
	if status.Set(w, metav1.Condition{Type: status.Ready, Status: metav1.ConditionFalse, Reason: "B", Message: "new message"}) {
		t.Error("setting the same condition reported a change")
	}
	status.Set(w, metav1.Condition{Type: status.Ready, Status: metav1.ConditionTrue, Reason: "B"})
	if got := status.Get(w, status.Ready).LastTransitionTime; got.Equal(&ltt) {
		t.Error("lastTransitionTime did not move when the status did")
	}
}

func TestSetErrorAndCurrency(t *testing.T) {
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	if status.IsCurrent(w) {
		t.Error("current before anything was observed")
	}
	status.SetError(w, fmt.Errorf("fetch image: %w", koperrors.Errorf(koperrors.Unavailable, "registry down")))
	if c := status.Get(w, status.Ready); c.Status != metav1.ConditionFalse || c.Reason != "Unavailable" || c.Message != "fetch image: registry down" {
		t.Errorf("Ready = %+v", c)
	}
	if status.Get(w, status.Reconciling) == nil || status.Get(w, status.Stalled) != nil {
		t.Errorf("a retryable error should leave Reconciling and no Stalled: %+v", w.Status.Conditions)
	}
	status.SetError(w, koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "spec.port 70000: must be at most 65535")))
	if c := status.Get(w, status.Stalled); c == nil || c.Reason != "Invalid" || !strings.Contains(c.Message, "spec.port") {
		t.Errorf("Stalled = %+v", c)
	}
	if status.Get(w, status.Reconciling) != nil {
		t.Error("Reconciling survived a terminal error")
	}
	status.SetError(w, errors.New(strings.Repeat("x", 40000)))
	if n := len(status.Get(w, status.Ready).Message); n > 32768 {
		t.Errorf("message of %d bytes exceeds the API limit", n)
	}
	status.SetError(w, nil)
	if !status.IsReady(w) || len(w.Status.Conditions) != 1 {
		t.Errorf("after success: %+v", w.Status.Conditions)
	}
	if !status.SetObservedGeneration(w) || !status.IsCurrent(w) {
		t.Error("not current after SetObservedGeneration")
	}
	w.Generation = 3
	if status.IsCurrent(w) || status.IsReady(w) {
		t.Error("a new generation must not look handled or ready")
	}
}

func TestPatchNeedsFieldOwner(t *testing.T) {
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "w"}}
	p := status.NewPatcher(w)
	w.Status.Phase = "x"
	if _, err := p.Patch(t.Context(), cluster.Client(), w, ""); !koperrors.IsInvalid(err) {
		t.Errorf("Patch without field owner = %v, want Invalid", err)
	}
}

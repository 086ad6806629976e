package loop_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// A reconciler reporting progress itself (a rollout that takes several
// reconciles, then a custom Ready) keeps its conditions: setting the same
// ones again writes nothing and is not overridden by the default Ready, and
// a failure followed by a success that sets nothing ends Ready=True.
func TestConditionsSetByTheReconcilerStand(t *testing.T) {
	var phase atomic.Value // "rolling", "available", "fail", "plain"
	phase.Store("rolling")
	h := newHarness(t, reconciler.Func[*widget.Widget](func(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
		switch phase.Load() {
		case "rolling":
			if status.Get(w, status.Reconciling) != nil {
				t.Error("Reconciling is visible to the reconciler; it should start cleared")
			}
			status.MarkReconciling(w, "RollingOut", "1 of 2 pods")
		case "available":
			status.MarkReady(w, "Available", "2 of 2 pods")
		case "fail":
			return reconciler.Done(), errors.New("boom")
		}
		return reconciler.Done(), nil
	}))

	step := func(name, wantReady, wantReconciling string, wantWrite bool) {
		t.Helper()
		before := h.get()
		if _, err := h.reconcile(); err != nil && phase.Load() != "fail" {
			t.Fatalf("%s: %v", name, err)
		}
		got := h.get()
		if r, rc := condition(got, status.Ready), condition(got, status.Reconciling); r != wantReady || rc != wantReconciling {
			t.Errorf("%s: Ready %s, Reconciling %s; want %s, %s", name, r, rc, wantReady, wantReconciling)
		}
		if wrote := got.ResourceVersion != before.ResourceVersion; wrote != wantWrite {
			t.Errorf("%s: status written = %v, want %v", name, wrote, wantWrite)
		}
		if c, b := status.Get(got, status.Reconciling), status.Get(before, status.Reconciling); c != nil && b != nil && c.Status == b.Status &&
			!c.LastTransitionTime.Equal(&b.LastTransitionTime) {
			t.Errorf("%s: Reconciling's lastTransitionTime moved without a transition", name)
		}
	}
	step("first rollout reconcile", "Unknown/RollingOut", "True/RollingOut", true)
	step("same progress again", "Unknown/RollingOut", "True/RollingOut", false)
	phase.Store("available")
	step("available", "True/Available", "-", true)
	step("available again", "True/Available", "-", false)
	phase.Store("fail")
	step("failure", "False/Internal", "True/Internal", true)
	phase.Store("plain")
	step("success setting nothing", "True/Succeeded", "-", true)
	step("and again", "True/Succeeded", "-", false)
	if got := h.get(); got.Status.ObservedGeneration != got.Generation {
		t.Errorf("observedGeneration %d, want %d", got.Status.ObservedGeneration, got.Generation)
	}
}

// A reconciler that reports progress first and then fails the same way on
// every retry (the pattern Sync functions follow) writes its status once:
// Ready passes through Unknown within each reconcile, but its stored status
// stays False, so its lastTransitionTime must not move.
func TestIdenticalFailedRetriesWriteNothing(t *testing.T) {
	h := newHarness(t, reconciler.Func[*widget.Widget](func(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
		status.MarkReconciling(w, "Applying", "applying children")
		return reconciler.Done(), errors.New("apply ConfigMap a: boom")
	}))
	if _, err := h.reconcile(); err == nil {
		t.Fatal("the failure reached controller-runtime as a success")
	}
	first := h.get()
	time.Sleep(1100 * time.Millisecond) // lastTransitionTime has second precision
	for range 2 {
		_, _ = h.reconcile()
	}
	got := h.get()
	if got.ResourceVersion != first.ResourceVersion {
		t.Errorf("identical failed retries rewrote status: Ready %+v, then %+v", status.Get(first, status.Ready), status.Get(got, status.Ready))
	}
}

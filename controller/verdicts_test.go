package controller_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// conflicting applies a ConfigMap's data.k, a field another manager owns
// with another value, without force; it counts its calls.
type conflicting struct{ calls atomic.Int32 }

func (c *conflicting) Reconcile(ctx context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
	c.calls.Add(1)
	cm := corev1ac.ConfigMap(w.Name+"-shared", w.Namespace).WithData(map[string]string{"k": fmt.Sprintf("ours-%d", w.Spec.Size)})
	_, err := env.Applier.Apply(ctx, cm)
	return reconciler.Done(), err
}

// A field-manager conflict is a verdict: one reconcile, Stalled naming
// the field and the manager and how to resolve it, no retry within a
// minute, and a change of the spec reconciles again.
func TestFieldConflictIsStalled(t *testing.T) {
	ns := cluster.Namespace(t)
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "conflict-shared"}, Data: map[string]string{"k": "theirs"}}
	if err := cluster.Client().Create(t.Context(), theirs, client.FieldOwner("other-writer")); err != nil {
		t.Fatal(err)
	}
	r := &conflicting{}
	run(t, kopcontroller.New[*widget.Widget]("conflict-verdict", r).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	w := createWidget(t, ns, "conflict", ns)
	eventually(t, 30*time.Second, "the first reconcile", func() error {
		if r.calls.Load() == 0 {
			return fmt.Errorf("none yet")
		}
		return nil
	})
	start := time.Now()
	time.Sleep(60 * time.Second)
	calls := r.calls.Load()
	stalled := status.Get(getWidget(t, w), status.Stalled)
	t.Logf("%d reconciles within %s of the first; Stalled %+v", calls, time.Since(start).Round(time.Second), stalled)
	if calls != 1 {
		t.Errorf("%d reconciles within %s of the conflict, want 1 (no retry)", calls, time.Since(start).Round(time.Second))
	}
	if stalled == nil || stalled.Status != metav1.ConditionTrue {
		t.Fatalf("Stalled = %+v, want True", stalled)
	}
	for _, want := range []string{".data.k", `"other-writer"`, "Force", "stop setting"} {
		if !strings.Contains(stalled.Message, want) {
			t.Errorf("Stalled message %q does not name %s", stalled.Message, want)
		}
	}
	cur := getWidget(t, w)
	cur.Spec.Size = 2
	if err := cluster.Client().Update(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "a reconcile after the spec changed", func() error {
		if got := r.calls.Load(); got < 2 {
			return fmt.Errorf("%d reconciles", got)
		}
		return nil
	})
}

// rollingOut reports a rollout in progress: Ready=Unknown, Reconciling=True.
type rollingOut struct{}

func (rollingOut) Reconcile(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	status.MarkReconciling(w, "RollingOut", "1 of 3 replicas updated")
	return reconciler.Done(), nil
}

// An object not Ready for an hour is counted so across a restart of the
// operator: its Ready condition keeps its time when Ready moves from False
// to Unknown, and the gauges read the stored time, not the process'.
func TestNotReadySinceSurvivesRestart(t *testing.T) {
	ns := cluster.Namespace(t)
	w := createWidget(t, ns, "not-ready", ns)
	hourAgo := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	cur := getWidget(t, w)
	cur.Status.Conditions = []metav1.Condition{
		{Type: status.Ready, Status: metav1.ConditionFalse, Reason: "Unavailable", Message: "registry down", LastTransitionTime: hourAgo, ObservedGeneration: 1},
		{Type: status.Reconciling, Status: metav1.ConditionTrue, Reason: "Unavailable", Message: "registry down", LastTransitionTime: hourAgo, ObservedGeneration: 1},
	}
	if err := cluster.Client().Status().Update(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	for i, phase := range []string{"first run", "after a restart and a leader handover"} {
		reg := prometheus.NewRegistry()
		metrics, err := observability.NewMetrics(reg)
		if err != nil {
			t.Fatal(err)
		}
		// Two replicas, one after the other, handing the lease over; names
		// are unique per process (replicas are processes of one name).
		stop := run(t, kopcontroller.New[*widget.Widget](fmt.Sprintf("not-ready-since-%d", i+1), rollingOut{}).Metrics(metrics).
			Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns).
			LeaderElection(ns, "not-ready-leader").LeaderElectionTimings(3*time.Second, 2*time.Second, 200*time.Millisecond))
		var bucket, oldest float64
		eventually(t, 30*time.Second, phase+": reconciled and counted", func() error {
			r := status.Get(getWidget(t, w), status.Ready)
			if r == nil || r.Status != metav1.ConditionUnknown {
				return fmt.Errorf("Ready %+v", r)
			}
			bucket, oldest = gaugeValue(reg, "kopgo_objects_not_ready_longer_than", "longer_than", "15m"), gaugeValue(reg, "kopgo_objects_oldest_not_ready_timestamp_seconds", "", "")
			if bucket < 0 {
				return fmt.Errorf("not observed yet")
			}
			return nil
		})
		r := status.Get(getWidget(t, w), status.Ready)
		t.Logf("%s: Ready=%s since %s (%s ago), not_ready_longer_than{15m}=%v, oldest not Ready %v",
			phase, r.Status, r.LastTransitionTime.UTC().Format(time.RFC3339), time.Since(r.LastTransitionTime.Time).Round(time.Second), bucket, time.Unix(int64(oldest), 0).UTC().Format(time.RFC3339))
		if !r.LastTransitionTime.Equal(&hourAgo) {
			t.Errorf("%s: Ready not True since %v, want %v (an hour ago)", phase, r.LastTransitionTime, hourAgo)
		}
		if bucket != 1 {
			t.Errorf("%s: kopgo_objects_not_ready_longer_than{longer_than=\"15m\"} = %v, want 1", phase, bucket)
		}
		if want := float64(hourAgo.Unix()); oldest != want {
			t.Errorf("%s: oldest not Ready %v, want %v", phase, oldest, want)
		}
		stop() // the cleanup waits for Run to return
	}
}

// gaugeValue is the value of the gauge name with label=value (any series
// when label is ""), -1 when there is none.
func gaugeValue(reg *prometheus.Registry, name, label, value string) float64 {
	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if label == "" {
				return m.GetGauge().GetValue()
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/widget"
)

// seriesOf counts the series of the gauge kopgo_objects that the
// controller name serves from reg.
func seriesOf(t *testing.T, reg *prometheus.Registry, name string) int {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range families {
		if f.GetName() != "kopgo_objects" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == name {
					n++
				}
			}
		}
	}
	return n
}

// A stopped controller's objects leave its health gauges: the metrics
// outlive the manager (the default ones are the process's), and before,
// a process that went on kept every object's entry and served its series.
func TestStoppedControllerLeavesNoObjectsInItsMetrics(t *testing.T) {
	ns := cluster.Namespace(t)
	reg := prometheus.NewRegistry()
	m, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	r := reconciler.Func[*widget.Widget](func(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
		return reconciler.Done(), nil
	})
	stop := run(t, kopcontroller.New[*widget.Widget]("forget", r).Config(cluster.Config).Scheme(scheme).
		Metrics(m).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	for _, name := range []string{"a", "b", "c"} {
		w := createWidget(t, ns, name, ns)
		eventually(t, 30*time.Second, "Ready", readyIs(t, w, "True", ""))
	}
	if n := seriesOf(t, reg, "forget"); n == 0 {
		t.Fatal("no kopgo_objects series while the controller runs")
	}
	stop()
	eventually(t, 30*time.Second, "the series gone", func() error {
		if n := seriesOf(t, reg, "forget"); n != 0 {
			return fmt.Errorf("%d series of the stopped controller", n)
		}
		return nil
	})
}

// A reconcile still running when the controller stops (within the
// graceful-shutdown window) records its object after the stop began: the
// Forgetter waits for it, so its series goes too. Before the Forgetter
// waited on the reconciles in flight, the held reconcile's object stayed
// in the gauges of the stopped controller.
func TestReconcileInFlightAtStopLeavesNoObjectInItsMetrics(t *testing.T) {
	ns := cluster.Namespace(t)
	reg := prometheus.NewRegistry()
	m, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	r := reconciler.Func[*widget.Widget](func(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
		if w.Name == "held" {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release // ignores ctx: the stop must wait for it
		}
		return reconciler.Done(), nil
	})
	stop := run(t, kopcontroller.New[*widget.Widget]("forget-inflight", r).Config(cluster.Config).Scheme(scheme).
		GracefulShutdown(20*time.Second).Metrics(m).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	w := createWidget(t, ns, "done", ns)
	eventually(t, 30*time.Second, "Ready", readyIs(t, w, "True", ""))
	createWidget(t, ns, "held", ns)
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the held reconcile did not start")
	}
	stop()
	// The stop has begun and waits on the held reconcile; let it finish.
	time.Sleep(time.Second)
	close(release)
	eventually(t, 30*time.Second, "the series gone", func() error {
		if n := seriesOf(t, reg, "forget-inflight"); n != 0 {
			return fmt.Errorf("%d series of the stopped controller", n)
		}
		return nil
	})
	// And they stay gone: nothing recorded after the Forgetter ran.
	time.Sleep(2 * time.Second)
	if n := seriesOf(t, reg, "forget-inflight"); n != 0 {
		t.Errorf("%d series of the stopped controller after the held reconcile returned", n)
	}
}

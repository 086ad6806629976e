package reconciler_test

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kopgo/kopgo/apply"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
)

// counterValue is a Collector exposing one series of a gathered counter
// family (0 when absent), for testutil.ToFloat64.
type counterValue struct {
	reg          *prometheus.Registry
	name         string
	label, value string
}

func (c counterValue) Describe(ch chan<- *prometheus.Desc) {
	ch <- prometheus.NewDesc("kopgo_test_value", "test", nil, nil)
}

func (c counterValue) Collect(ch chan<- prometheus.Metric) {
	v := 0.0
	families, _ := c.reg.Gather()
	for _, f := range families {
		if f.GetName() != c.name {
			continue
		}
		for _, m := range f.GetMetric() {
			if has(m, c.label, c.value) {
				v = m.GetCounter().GetValue()
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(prometheus.NewDesc("kopgo_test_value", "test", nil, nil), prometheus.GaugeValue, v)
}

func has(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// recorder is a minimal Recorder for the example.
type recorder struct{}

func (recorder) Normal(_, _ runtime.Object, reason, _, note string) {
	fmt.Println("event:", reason, note)
}
func (recorder) Warning(_, _ runtime.Object, reason, _, note string) {
	fmt.Println("warning:", reason, note)
}

// envFromManager is the Env kopgo's Builder gives a reconciler: mgr's
// clients and scheme, and an Applier on its cache.
func envFromManager(tb testing.TB, mgr manager.Manager, fieldOwner string, recorder observability.Recorder) *reconciler.Env {
	tb.Helper()
	applier, err := apply.New(mgr.GetConfig(), fieldOwner, apply.WithCluster(mgr))
	if err != nil {
		tb.Fatal(err)
	}
	if recorder == nil {
		recorder = &observability.FakeRecorder{}
	}
	return &reconciler.Env{
		Client: client.WithFieldOwner(mgr.GetClient(), fieldOwner), Reader: mgr.GetAPIReader(), Recorder: recorder,
		Scheme: mgr.GetScheme(), Applier: applier,
	}
}

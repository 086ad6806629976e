package loop_test

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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

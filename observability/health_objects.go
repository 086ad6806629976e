package observability

import (
	"github.com/prometheus/client_golang/prometheus"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// RegisterObjectSeries registers on reg, opt-in, one series per unhealthy
// object next to the bounded object-health series:
//
//	kopgo_object_not_ready_since_timestamp_seconds{controller,namespace,name}
//	kopgo_object_stalled_since_timestamp_seconds{controller,namespace,name}
//
// each the Unix time since which that object has not been Ready, or has
// been Stalled, as [Metrics.ObserveObject] recorded it. A healthy object
// has no series, so their number is bounded by the objects in trouble,
// not by all objects; still, it follows object names, which Prometheus
// pays for as new series when objects come and go. Register it once per
// registry; a second registration fails.
func (m *Metrics) RegisterObjectSeries(reg prometheus.Registerer) error {
	if m == nil || m.health == nil {
		return koperrors.Errorf(koperrors.Config, "register object series: no metrics")
	}
	c := &objectSeries{
		h: m.health,
		notReady: prometheus.NewDesc("kopgo_object_not_ready_since_timestamp_seconds",
			"Since when the object has not been Ready (Unix time); only objects not Ready have a series.",
			[]string{"controller", "namespace", "name"}, nil),
		stalled: prometheus.NewDesc("kopgo_object_stalled_since_timestamp_seconds",
			"Since when the object has been Stalled (Unix time); only Stalled objects have a series.",
			[]string{"controller", "namespace", "name"}, nil),
	}
	if err := reg.Register(c); err != nil {
		return koperrors.WrapKind(koperrors.Config, err, "register object series", kopmeta.ObjectRef{})
	}
	return nil
}

// objectSeries is the opt-in per-object collector over the health records.
type objectSeries struct {
	h                 *healthCollector
	notReady, stalled *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c *objectSeries) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.notReady
	ch <- c.stalled
}

// Collect implements prometheus.Collector: it copies what to send under
// the lock and sends after.
func (c *objectSeries) Collect(ch chan<- prometheus.Metric) {
	var out []prometheus.Metric
	c.h.mu.Lock()
	for controller, objs := range c.h.controllers {
		for key, o := range objs {
			if !o.notReadySince.IsZero() {
				out = append(out, prometheus.MustNewConstMetric(c.notReady, prometheus.GaugeValue, unixSeconds(o.notReadySince), controller, key.Namespace, key.Name))
			}
			if o.stalled {
				out = append(out, prometheus.MustNewConstMetric(c.stalled, prometheus.GaugeValue, unixSeconds(o.stalledSince), controller, key.Namespace, key.Name))
			}
		}
	}
	c.h.mu.Unlock()
	for _, metric := range out {
		ch <- metric
	}
}

package observability

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kopgo/kopgo/internal/telemetry"
)

// Metrics are kopgo's Prometheus collectors. Create them with [NewMetrics]
// or take [Default], and hand them to the packages that count: the
// Builder (Run or Setup) does so itself for the reconcile loop, the
// Applier and gc; used alone, apply.WithMetrics and gc.Metrics take them.
//
//	kopgo_reconcile_total{controller,result}
//	kopgo_reconcile_errors_total{controller,error_kind}
//	kopgo_reconcile_duration_seconds{controller}     with trace-ID exemplars
//	kopgo_apply_total{controller,outcome}
//	kopgo_gc_deletions_total{controller}
//
// The package documentation lists the label values: all lower case, from
// closed sets, never an error string.
type Metrics telemetry.Metrics

// Default returns the Metrics registered on controller-runtime's registry,
// served next to its own metrics on the manager's /metrics endpoint.
func Default() (*Metrics, error) {
	m, err := telemetry.Default()
	return (*Metrics)(m), err
}

// NewMetrics creates the collectors and registers them on reg. Collectors
// already registered there (by another Metrics) are shared, so two
// controllers in one process count into the same series.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m, err := telemetry.NewMetrics(reg)
	return (*Metrics)(m), err
}

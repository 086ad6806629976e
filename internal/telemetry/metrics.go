package telemetry

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// Result is the outcome of one reconcile, as the result label of
// kopgo_reconcile_total records it. The set is closed.
type Result string

// The reconcile results.
const (
	// ResultSuccess: the reconcile returned without error or requeue.
	ResultSuccess Result = "success"
	// ResultRequeue: it asked to be run again (RequeueAfter without error).
	ResultRequeue Result = "requeue"
	// ResultConflict: an optimistic-lock 409 retried quietly through the
	// rate limiter; not an error (the fourth in a row is counted as
	// ResultError).
	ResultConflict Result = "conflict"
	// ResultError: it failed and will be retried with backoff.
	ResultError Result = "error"
	// ResultTerminal: it failed and will not be retried until the object
	// changes.
	ResultTerminal Result = "terminal"
	// ResultTimeout: it ran past its deadline; also counted as an error.
	ResultTimeout Result = "timeout"
	// ResultPanic: user code panicked; also counted as an error.
	ResultPanic Result = "panic"
)

// Metrics are kopgo's Prometheus collectors; observability.Metrics is this
// type under its public name, and kopgo's packages convert one to the other.
type Metrics struct {
	reconciles *prometheus.CounterVec
	errors     *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	applies    *prometheus.CounterVec
	deletions  *prometheus.CounterVec
}

var (
	defaultOnce    sync.Once
	defaultMetrics *Metrics
	defaultErr     error
)

// Default returns the Metrics registered on controller-runtime's registry.
func Default() (*Metrics, error) {
	defaultOnce.Do(func() { defaultMetrics, defaultErr = NewMetrics(ctrlmetrics.Registry) })
	return defaultMetrics, defaultErr
}

// NewMetrics creates the collectors and registers them on reg, sharing
// collectors already registered there under the same names.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kopgo_reconcile_total", Help: "Reconciles by controller and result.",
		}, []string{"controller", "result"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kopgo_reconcile_errors_total", Help: "Failed reconciles by controller and error kind.",
		}, []string{"controller", "error_kind"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kopgo_reconcile_duration_seconds", Help: "Time spent in a reconcile.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"controller"}),
		applies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kopgo_apply_total", Help: "Server-side applies by controller and outcome.",
		}, []string{"controller", "outcome"}),
		deletions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kopgo_gc_deletions_total", Help: "Objects deleted by garbage collection.",
		}, []string{"controller"}),
	}
	var err error
	m.reconciles = register(reg, m.reconciles, &err)
	m.errors = register(reg, m.errors, &err)
	m.duration = register(reg, m.duration, &err)
	m.applies = register(reg, m.applies, &err)
	m.deletions = register(reg, m.deletions, &err)
	if err != nil {
		return nil, koperrors.WrapKind(koperrors.Config, err, "register metrics", kopmeta.ObjectRef{})
	}
	return m, nil
}

// register registers c, or returns the collector already registered under
// its name.
func register[C prometheus.Collector](reg prometheus.Registerer, c C, errp *error) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	if *errp == nil {
		*errp = err
	}
	return c
}

// ObserveReconcile records one reconcile: its result, its duration (with
// the trace ID of the span in ctx as exemplar), and, when it failed, the
// kind of error. A nil m records nothing.
func (m *Metrics) ObserveReconcile(ctx context.Context, controller string, result Result, err error, d time.Duration) {
	if m == nil {
		return
	}
	m.reconciles.WithLabelValues(controller, string(result)).Inc()
	switch result {
	case ResultError, ResultTerminal, ResultTimeout, ResultPanic:
		kind := koperrors.KindOf(err)
		if result == ResultTimeout {
			kind = koperrors.Timeout
		}
		m.errors.WithLabelValues(controller, ErrorKindLabel(kind)).Inc()
	}
	obs := m.duration.WithLabelValues(controller)
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() && sc.IsSampled() {
		if eo, ok := obs.(prometheus.ExemplarObserver); ok {
			eo.ObserveWithExemplar(d.Seconds(), prometheus.Labels{"trace_id": sc.TraceID().String()})
			return
		}
	}
	obs.Observe(d.Seconds())
}

// RecordApply counts one apply with its outcome (apply.Outcome's String:
// "Created", "Updated", "Unchanged"), lower-cased as a label value. A nil m
// records nothing.
func (m *Metrics) RecordApply(controller, outcome string) {
	if m == nil {
		return
	}
	m.applies.WithLabelValues(controller, strings.ToLower(outcome)).Inc()
}

// RecordDeletions counts objects deleted by garbage collection. A nil m
// records nothing.
func (m *Metrics) RecordDeletions(controller string, n int) {
	if m == nil {
		return
	}
	m.deletions.WithLabelValues(controller).Add(float64(n))
}

// ErrorKindLabel is the error_kind label value of k: its name in lower
// snake_case ("NotFound" is "not_found", "IO" is "io").
func ErrorKindLabel(k koperrors.Kind) string {
	name := k.String()
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) && i > 0 && !unicode.IsUpper(rune(name[i-1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

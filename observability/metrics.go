package observability

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

// Metrics are kopgo's Prometheus collectors, registered on one registry.
// Create them with [NewMetrics] on any prometheus.Registerer, or take
// [Default] (controller-runtime's registry, served on the manager's
// /metrics endpoint), and hand them to what counts: the Builder does so
// itself, apply.WithMetrics and gc.Metrics take them, and a plain
// controller-runtime reconciler records into them with
// [Metrics.ObserveReconcile]. The package documentation lists the series
// and their label values.
//
// A nil *Metrics records nothing, so code that counts needs no check.
type Metrics struct {
	reconciles *prometheus.CounterVec
	errors     *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	applies    *prometheus.CounterVec
	deletions  *prometheus.CounterVec
	deferrals  *prometheus.CounterVec
	skips      *prometheus.CounterVec

	externalCalls    *prometheus.CounterVec
	externalDuration *prometheus.HistogramVec

	// Object health (health.go): kept per object, summarised at a scrape.
	health *healthCollector
}

// ReconcileResult is the outcome of one reconcile, the result label of
// kopgo_reconcile_total. The set is closed: use the constants.
type ReconcileResult string

// The reconcile results.
const (
	// ResultSuccess: the reconcile returned without error or requeue.
	ResultSuccess ReconcileResult = "success"
	// ResultRequeue: it asked to be run again, without an error.
	ResultRequeue ReconcileResult = "requeue"
	// ResultConflict: an optimistic-lock 409 retried quietly through the
	// rate limiter; not counted as an error.
	ResultConflict ReconcileResult = "conflict"
	// ResultError: it failed and will be retried with backoff.
	ResultError ReconcileResult = "error"
	// ResultTerminal: it failed and will not be retried until the object
	// changes.
	ResultTerminal ReconcileResult = "terminal"
	// ResultTimeout: it ran past its deadline; also counted as an error,
	// of kind timeout.
	ResultTimeout ReconcileResult = "timeout"
	// ResultPanic: user code panicked; also counted as an error.
	ResultPanic ReconcileResult = "panic"
)

var (
	defaultOnce    sync.Once
	defaultMetrics *Metrics
	errDefault     error
)

// Default returns the Metrics registered on controller-runtime's registry
// (sigs.k8s.io/controller-runtime/pkg/metrics.Registry), served next to
// its own metrics on the manager's /metrics endpoint. Every call returns
// the same Metrics.
func Default() (*Metrics, error) {
	defaultOnce.Do(func() { defaultMetrics, errDefault = NewMetrics(ctrlmetrics.Registry) })
	return defaultMetrics, errDefault
}

// NewMetrics creates the collectors and registers them on reg, any
// prometheus.Registerer: a registry of your own, served by your own
// handler or pushed by a job. Collectors already registered there (by
// another Metrics) are shared, so two controllers in one process count
// into the same series. It fails when reg holds a different collector
// under one of kopgo's names.
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
		deferrals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kopgo_reconcile_deferred_total",
			Help: "Reconciles deferred because the cache held the object older than this process's last write to it (outcome deferred), and those run anyway after the bounded wait (outcome expired).",
		}, []string{"controller", "outcome"}),
		skips: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kopgo_reconcile_skipped_total",
			Help: "Wake-ups of an object that ran no reconcile, by reason: nothing_new (no change since the last reconcile, no requeue due), not_due (nothing new, a requeue is due later), retry_after (the last error's own delay holds).",
		}, []string{"controller", "reason"}),
		externalCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kopgo_external_requests_total",
			Help: "Calls to an external system (the external package's observe, create, update, delete, find) by controller, operation and outcome: success, or the error's kind.",
		}, []string{"controller", "operation", "outcome"}),
		externalDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kopgo_external_request_duration_seconds", Help: "Time spent in a call to an external system, by controller and operation.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{"controller", "operation"}),
	}
	var err error
	m.reconciles = register(reg, m.reconciles, &err)
	m.errors = register(reg, m.errors, &err)
	m.duration = register(reg, m.duration, &err)
	m.applies = register(reg, m.applies, &err)
	m.deletions = register(reg, m.deletions, &err)
	m.deferrals = register(reg, m.deferrals, &err)
	m.skips = register(reg, m.skips, &err)
	m.externalCalls = register(reg, m.externalCalls, &err)
	m.externalDuration = register(reg, m.externalDuration, &err)
	m.health = register(reg, newHealthCollector(), &err)
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

// ObserveReconcile records one reconcile of controller: its result, its
// duration d (with the trace ID of the span in ctx, if sampled, as
// exemplar) and, for ResultError, ResultTerminal, ResultTimeout and
// ResultPanic, the kind of err (koperrors.KindOf) as error_kind.
func (m *Metrics) ObserveReconcile(ctx context.Context, controller string, result ReconcileResult, err error, d time.Duration) {
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
		m.errors.WithLabelValues(controller, errorKindLabel(kind)).Inc()
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

// RecordApply counts one server-side apply by controller with its
// outcome ("Created", "Updated", "Unchanged", as apply.Outcome's String
// gives it), lower-cased as the label value.
func (m *Metrics) RecordApply(controller, outcome string) {
	if m == nil {
		return
	}
	m.applies.WithLabelValues(controller, strings.ToLower(outcome)).Inc()
}

// RecordDeletions counts n objects deleted by controller's garbage
// collection.
func (m *Metrics) RecordDeletions(controller string, n int) {
	if m == nil {
		return
	}
	m.deletions.WithLabelValues(controller).Add(float64(n))
}

// RecordDeferral counts one reconcile of controller deferred because the
// cache held its object older than the process's last write to it
// (outcome "deferred"), or, with expired, one that waited for the cache
// as long as it may and ran on what the cache had (outcome "expired").
func (m *Metrics) RecordDeferral(controller string, expired bool) {
	if m == nil {
		return
	}
	outcome := "deferred"
	if expired {
		outcome = "expired"
	}
	m.deferrals.WithLabelValues(controller, outcome).Inc()
}

// RecordSkip records a wake-up of an object of controller that ran no
// reconcile, for reason: "nothing_new", "not_due" or "retry_after" (see
// the reconciler package, "What wakes an object").
func (m *Metrics) RecordSkip(controller, reason string) {
	if m == nil {
		return
	}
	m.skips.WithLabelValues(controller, reason).Inc()
}

// RecordExternalCall records one call of controller to a system outside
// the cluster: operation ("observe", "create", "update", "delete", "find"
// for the external package's calls), its outcome ("success", or for a
// failure the kind of err, koperrors.KindOf, as error_kind labels it in
// kopgo_reconcile_errors_total) and its duration d.
func (m *Metrics) RecordExternalCall(controller, operation string, err error, d time.Duration) {
	if m == nil {
		return
	}
	outcome := "success"
	if err != nil {
		outcome = errorKindLabel(koperrors.KindOf(err))
	}
	m.externalCalls.WithLabelValues(controller, operation, outcome).Inc()
	m.externalDuration.WithLabelValues(controller, operation).Observe(d.Seconds())
}

// errorKindLabel is the error_kind label value of k: its name in lower
// snake_case ("NotFound" is "not_found", "IO" is "io").
func errorKindLabel(k koperrors.Kind) string {
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

package reconciler

import (
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/kopgo/kopgo/internal/telemetry"
	"github.com/kopgo/kopgo/observability"
)

// Option configures the Adapter that [NewAdapter] returns. Every setting
// has a working default; kopgo's controller Builder passes its own
// (ReconcilerOptions) through.
type Option func(*options)

// options are the Adapter's settings.
type options struct {
	Timeout       time.Duration
	Drain         time.Duration
	StatusTimeout time.Duration
	FinalizerName string
	Metrics       *observability.Metrics
	Tracer        trace.Tracer
}

// WithTimeout sets the deadline of one call to Reconcile or Cleanup; 0 (the
// default) means none. A reconcile past it fails with an error of Kind
// Timeout, which [WithStatusTimeout] leaves time to record.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.Timeout = d } }

// WithDrain sets how long a reconcile in flight when the controller stops
// (SIGTERM) may go on: its context is not cancelled until d has passed. 0
// (the default) cancels it at once. A reconcile that fails because it was
// cut short writes nothing into status. The controller Builder sets it from
// its graceful-shutdown window.
func WithDrain(d time.Duration) Option { return func(o *options) { o.Drain = d } }

// WithStatusTimeout sets the deadline of the status write that records a
// reconcile's outcome (default 5s). It starts when the reconcile returns,
// so even a reconcile that ran out of its own time ([WithTimeout]) gets its
// failure into status.
func WithStatusTimeout(d time.Duration) Option { return func(o *options) { o.StatusTimeout = d } }

// WithFinalizerName sets the finalizer of the [Finalizer] hook. Default
// "kopgo.dev/<controller name>".
func WithFinalizerName(name string) Option { return func(o *options) { o.FinalizerName = name } }

// WithTracerProvider traces reconciles with tp (default: no tracing).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.Tracer = telemetry.Tracer(tp) }
}

// withMetrics records reconciles in m instead of observability.Default():
// for tests, which want a registry of their own.
func withMetrics(m *observability.Metrics) Option { return func(o *options) { o.Metrics = m } }

func buildOptions(name string, opts []Option) options {
	o := options{StatusTimeout: 5 * time.Second, FinalizerName: "kopgo.dev/" + name, Tracer: telemetry.Tracer(nil)}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

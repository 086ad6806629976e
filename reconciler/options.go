package reconciler

import (
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/kopgo/kopgo/observability"
)

// Options configure an [Adapter]. Every field has a working default.
type Options struct {
	// Timeout is the deadline of one call to Reconcile or Cleanup; 0 means
	// none. A reconcile past it fails with an error of Kind Timeout.
	Timeout time.Duration
	// Drain is how long a reconcile in flight when the controller stops
	// (SIGTERM) may go on: its context is not cancelled until Drain has
	// passed. 0 cancels it at once. A reconcile that fails because it was
	// cut short writes nothing into status. The Builder sets it from its
	// graceful-shutdown window.
	Drain time.Duration
	// StatusWindow is the time left after a reconcile (even one that timed
	// out) to record its outcome in status. Default 5s.
	StatusWindow time.Duration
	// FinalizerName is the finalizer of the Finalizer hook. Default
	// "kopgo.dev/<controller name>".
	FinalizerName string
	// Metrics records reconciles. Default observability.Default().
	Metrics *observability.Metrics
	// Tracer starts the reconcile spans. Default: no-op.
	Tracer trace.Tracer
}

// Option configures an [Adapter].
type Option func(*Options)

// WithTimeout sets [Options.Timeout].
func WithTimeout(d time.Duration) Option { return func(o *Options) { o.Timeout = d } }

// WithDrain sets [Options.Drain].
func WithDrain(d time.Duration) Option { return func(o *Options) { o.Drain = d } }

// WithStatusWindow sets [Options.StatusWindow].
func WithStatusWindow(d time.Duration) Option { return func(o *Options) { o.StatusWindow = d } }

// WithFinalizerName sets [Options.FinalizerName].
func WithFinalizerName(name string) Option { return func(o *Options) { o.FinalizerName = name } }

// WithMetrics sets [Options.Metrics].
func WithMetrics(m *observability.Metrics) Option { return func(o *Options) { o.Metrics = m } }

// WithTracerProvider traces reconciles with tp.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *Options) { o.Tracer = observability.Tracer(tp) }
}

func buildOptions(name string, opts []Option) Options {
	o := Options{StatusWindow: 5 * time.Second, FinalizerName: "kopgo.dev/" + name, Tracer: observability.Tracer(nil)}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

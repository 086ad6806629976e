package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TracerName is the instrumentation scope of kopgo's spans.
const TracerName = "github.com/kopgo/kopgo"

// The attribute keys of kopgo's spans; the package documentation lists
// them.
const (
	AttrController       = attribute.Key("kopgo.controller")
	AttrObjectKind       = attribute.Key("kopgo.object.kind")
	AttrObjectNamespace  = attribute.Key("kopgo.object.namespace")
	AttrObjectName       = attribute.Key("kopgo.object.name")
	AttrObjectUID        = attribute.Key("kopgo.object.uid")
	AttrObjectGeneration = attribute.Key("kopgo.object.generation")
	AttrResult           = attribute.Key("kopgo.result")
)

// Tracer returns kopgo's tracer from tp, or a no-op tracer when tp is nil:
// tracing costs nothing unless the user sets a TracerProvider.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer(TracerName)
}

// ObjectAttrs names an object by kind, namespace and name.
func ObjectAttrs(kind, namespace, name string) []attribute.KeyValue {
	return []attribute.KeyValue{AttrObjectKind.String(kind), AttrObjectNamespace.String(namespace), AttrObjectName.String(name)}
}

// StartReconcile starts the span of one reconcile with the controller and
// the object's kind, namespace, name, uid and generation as attributes. End
// it with [EndSpan]. The attributes are built only for a span that records
// them: without tracing, a reconcile's span costs the no-op tracer's call
// and nothing else.
func StartReconcile(ctx context.Context, tracer trace.Tracer, controller, kind string, obj client.Object) (context.Context, trace.Span) {
	ctx, span := tracer.Start(ctx, "reconcile "+kind, trace.WithSpanKind(trace.SpanKindInternal))
	if span.IsRecording() {
		span.SetAttributes(append(ObjectAttrs(kind, obj.GetNamespace(), obj.GetName()),
			AttrController.String(controller),
			AttrObjectUID.String(string(obj.GetUID())),
			AttrObjectGeneration.Int64(obj.GetGeneration()),
		)...)
	}
	return ctx, span
}

// noSpan is the span of work not traced, made once: a noop.Span in an
// interface would be allocated on every call.
var noSpan trace.Span = noop.Span{}

// StartSpan starts a child span of the span in ctx, from the same tracer
// provider: helpers (apply, status, finalizers, gc) call it so that their
// work shows under the reconcile's span. Under no recording span (no
// tracing, or a trace not sampled) it starts none and returns ctx as it is
// with a no-op span, so that a helper costs nothing without tracing.
func StartSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, noSpan
	}
	return parent.TracerProvider().Tracer(TracerName).Start(ctx, name, trace.WithAttributes(attrs...))
}

// EndSpan records the result (if not empty) and err (if any) on span and
// ends it.
func EndSpan(span trace.Span, result Result, err error) {
	if result != "" {
		span.SetAttributes(AttrResult.String(string(result)))
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

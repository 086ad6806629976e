package telemetry_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopgo/kopgo/internal/telemetry"
)

func TestSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", UID: "u1", Generation: 7}}
	ctx, span := telemetry.StartReconcile(t.Context(), telemetry.Tracer(tp), "web", "ConfigMap", obj)
	_, child := telemetry.StartSpan(ctx, "apply", telemetry.ObjectAttrs("Secret", "ns", "s")...)
	child.End()
	telemetry.EndSpan(span, telemetry.ResultError, errors.New("boom"))

	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	apply, reconcile := spans[0], spans[1]
	if apply.Name() != "apply" || apply.Parent().SpanID() != reconcile.SpanContext().SpanID() {
		t.Errorf("child span %q is not under the reconcile span", apply.Name())
	}
	attrs := func(s sdktrace.ReadOnlySpan) map[string]string {
		m := map[string]string{}
		for _, a := range s.Attributes() {
			m[string(a.Key)] = a.Value.String()
		}
		return m
	}
	want := map[string]string{
		"kopgo.controller": "web", "kopgo.object.kind": "ConfigMap", "kopgo.object.namespace": "ns",
		"kopgo.object.name": "cm", "kopgo.object.uid": "u1", "kopgo.object.generation": "7", "kopgo.result": "error",
	}
	if diff := cmp.Diff(want, attrs(reconcile)); diff != "" {
		t.Errorf("reconcile span attributes (-want +got):\n%s", diff)
	}
	wantChild := map[string]string{"kopgo.object.kind": "Secret", "kopgo.object.namespace": "ns", "kopgo.object.name": "s"}
	if diff := cmp.Diff(wantChild, attrs(apply)); diff != "" {
		t.Errorf("child span attributes (-want +got):\n%s", diff)
	}
	if reconcile.Status().Code != codes.Error {
		t.Errorf("status %v, want Error", reconcile.Status())
	}
	// Without a provider, nothing is recorded and nothing fails.
	_, noop := telemetry.StartReconcile(t.Context(), telemetry.Tracer(nil), "web", "ConfigMap", obj)
	if noop.SpanContext().IsValid() {
		t.Error("the default tracer is not a no-op")
	}
}

// Without a recording span, the helpers' spans cost nothing: no span, no
// new context, no allocation; a trace not sampled records no child either.
func TestNoSpanWithoutRecordingParent(t *testing.T) {
	ctx := t.Context()
	allocs := testing.AllocsPerRun(100, func() {
		got, span := telemetry.StartSpan(ctx, "apply")
		span.End()
		if got != ctx {
			t.Fatal("StartSpan without a span in ctx returned a new context")
		}
	})
	if allocs != 0 {
		t.Errorf("StartSpan without tracing: %v allocations, want 0", allocs)
	}

	rec := tracetest.NewSpanRecorder()
	never := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSampler(sdktrace.NeverSample()))
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}
	rctx, span := telemetry.StartReconcile(ctx, telemetry.Tracer(never), "web", "ConfigMap", obj)
	_, child := telemetry.StartSpan(rctx, "apply")
	child.End()
	telemetry.EndSpan(span, telemetry.ResultSuccess, nil)
	if n := len(rec.Ended()); n != 0 {
		t.Errorf("%d spans recorded for a trace not sampled, want 0", n)
	}
}

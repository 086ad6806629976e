package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/telemetry"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := telemetry.NewMetrics(reg) // a second controller shares the series
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	m.ObserveReconcile(ctx, "web", telemetry.ResultSuccess, nil, 10*time.Millisecond)
	again.ObserveReconcile(ctx, "web", telemetry.ResultSuccess, nil, 20*time.Millisecond)
	m.ObserveReconcile(ctx, "web", telemetry.ResultError, fmt.Errorf("x: %w", koperrors.Errorf(koperrors.Unavailable, "down")), time.Second)
	m.ObserveReconcile(ctx, "web", telemetry.ResultError, koperrors.Errorf(koperrors.NotFound, "gone"), time.Second)
	m.ObserveReconcile(ctx, "web", telemetry.ResultTerminal, koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "bad")), time.Millisecond)
	m.ObserveReconcile(ctx, "web", telemetry.ResultTimeout, context.DeadlineExceeded, 5*time.Second)
	m.ObserveReconcile(ctx, "web", telemetry.ResultConflict, errors.New("conflict"), time.Millisecond)
	m.RecordApply("web", "Created")
	m.RecordApply("web", "Unchanged")
	m.RecordApply("web", "Unchanged")
	m.RecordDeletions("web", 3)
	var none *telemetry.Metrics // nil records nothing, and does not panic
	none.RecordApply("web", "Created")
	none.RecordDeletions("web", 1)
	none.ObserveReconcile(ctx, "web", telemetry.ResultSuccess, nil, time.Millisecond)

	want := `
# HELP kopgo_apply_total Server-side applies by controller and outcome.
# TYPE kopgo_apply_total counter
kopgo_apply_total{controller="web",outcome="created"} 1
kopgo_apply_total{controller="web",outcome="unchanged"} 2
# HELP kopgo_gc_deletions_total Objects deleted by garbage collection.
# TYPE kopgo_gc_deletions_total counter
kopgo_gc_deletions_total{controller="web"} 3
# HELP kopgo_reconcile_errors_total Failed reconciles by controller and error kind.
# TYPE kopgo_reconcile_errors_total counter
kopgo_reconcile_errors_total{controller="web",error_kind="invalid"} 1
kopgo_reconcile_errors_total{controller="web",error_kind="not_found"} 1
kopgo_reconcile_errors_total{controller="web",error_kind="timeout"} 1
kopgo_reconcile_errors_total{controller="web",error_kind="unavailable"} 1
# HELP kopgo_reconcile_total Reconciles by controller and result.
# TYPE kopgo_reconcile_total counter
kopgo_reconcile_total{controller="web",result="conflict"} 1
kopgo_reconcile_total{controller="web",result="error"} 2
kopgo_reconcile_total{controller="web",result="success"} 2
kopgo_reconcile_total{controller="web",result="terminal"} 1
kopgo_reconcile_total{controller="web",result="timeout"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"kopgo_apply_total", "kopgo_gc_deletions_total", "kopgo_reconcile_errors_total", "kopgo_reconcile_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "kopgo_reconcile_duration_seconds"); n != 1 {
		t.Errorf("%d duration series, want 1", n)
	}
}

// Every error_kind value is lower snake_case of a Kind's name.
func TestErrorKindLabels(t *testing.T) {
	var got []string
	for _, k := range koperrors.Kinds() {
		got = append(got, telemetry.ErrorKindLabel(k))
	}
	want := []string{"internal", "not_found", "conflict", "forbidden", "invalid", "timeout", "unavailable",
		"serialization", "io", "config", "already_exists", "expired"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error_kind values (-want +got):\n%s", diff)
	}
}

func TestTraceIDExemplar(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider()
	ctx, span := telemetry.StartReconcile(t.Context(), telemetry.Tracer(tp), "web", "ConfigMap",
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}})
	m.ObserveReconcile(ctx, "web", telemetry.ResultSuccess, nil, 30*time.Millisecond)
	span.End()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "kopgo_reconcile_duration_seconds" {
			continue
		}
		for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
			if ex := b.GetExemplar(); ex != nil {
				if got := ex.GetLabel()[0].GetValue(); got != span.SpanContext().TraceID().String() {
					t.Errorf("exemplar trace_id %s, want %s", got, span.SpanContext().TraceID())
				}
				return
			}
		}
	}
	t.Error("no exemplar on the duration histogram")
}

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

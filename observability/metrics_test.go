package observability_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/observability"
)

// NewMetrics registers kopgo's five collectors; a second Metrics on the
// same registry shares them.
func TestNewMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := observability.NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := observability.NewMetrics(reg); err != nil {
		t.Fatalf("a second Metrics on one registry: %v", err)
	}
	for _, name := range []string{"kopgo_reconcile_total", "kopgo_reconcile_errors_total", "kopgo_reconcile_duration_seconds", "kopgo_apply_total", "kopgo_gc_deletions_total"} {
		if err := reg.Register(prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: "x"})); err == nil {
			t.Errorf("%s was not registered", name)
		}
	}
	if m, err := observability.Default(); err != nil || m == nil {
		t.Errorf("Default: %v, %v", m, err)
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := observability.NewMetrics(reg) // a second controller shares the series
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	m.ObserveReconcile(ctx, "web", observability.ResultSuccess, nil, 10*time.Millisecond)
	again.ObserveReconcile(ctx, "web", observability.ResultSuccess, nil, 20*time.Millisecond)
	m.ObserveReconcile(ctx, "web", observability.ResultError, fmt.Errorf("x: %w", koperrors.Errorf(koperrors.Unavailable, "down")), time.Second)
	m.ObserveReconcile(ctx, "web", observability.ResultError, koperrors.Errorf(koperrors.NotFound, "gone"), time.Second)
	m.ObserveReconcile(ctx, "web", observability.ResultTerminal, koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "bad")), time.Millisecond)
	m.ObserveReconcile(ctx, "web", observability.ResultTimeout, context.DeadlineExceeded, 5*time.Second)
	m.ObserveReconcile(ctx, "web", observability.ResultConflict, errors.New("conflict"), time.Millisecond)
	m.RecordApply("web", "Created")
	m.RecordApply("web", "Unchanged")
	m.RecordApply("web", "Unchanged")
	m.RecordDeletions("web", 3)
	var none *observability.Metrics // nil records nothing, and does not panic
	none.RecordApply("web", "Created")
	none.RecordDeletions("web", 1)
	none.ObserveReconcile(ctx, "web", observability.ResultSuccess, nil, time.Millisecond)

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

func TestTraceIDExemplar(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(t.Context(), "reconcile ConfigMap")
	m.ObserveReconcile(ctx, "web", observability.ResultSuccess, nil, 30*time.Millisecond)
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

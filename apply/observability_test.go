package apply_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kopgo/kopgo/apply"
	"github.com/kopgo/kopgo/observability"
)

// Each apply counts its outcome and shows as a child span of the caller's.
func TestApplyMetricsAndSpans(t *testing.T) {
	ns := cluster.Namespace(t)
	reg := prometheus.NewRegistry()
	m, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newApplier(t, apply.WithMetrics(m, "web"))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	ctx, parent := tp.Tracer("test").Start(t.Context(), "reconcile")
	for range 2 {
		if _, err := a.Apply(ctx, configMapAC(ns, "cm", map[string]string{"k": "v"})); err != nil {
			t.Fatal(err)
		}
	}
	parent.End()
	if got := testutil.ToFloat64(m.ApplyCounter("web", "Created")); got != 1 {
		t.Errorf("Created applies counted %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.ApplyCounter("web", "Unchanged")); got != 1 {
		t.Errorf("Unchanged applies counted %v, want 1", got)
	}
	var children int
	for _, s := range spans.Ended() {
		if s.Name() == "apply" && s.Parent().SpanID() == parent.SpanContext().SpanID() {
			children++
		}
	}
	if children != 2 {
		t.Errorf("%d apply spans under the caller's span, want 2", children)
	}
}

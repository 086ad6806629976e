package apply_test

import (
	"strings"
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
	want := `
# HELP kopgo_apply_total` + applyHelp(t, reg) + `
# TYPE kopgo_apply_total counter
kopgo_apply_total{controller="web",outcome="created"} 1
kopgo_apply_total{controller="web",outcome="unchanged"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kopgo_apply_total"); err != nil {
		t.Error(err)
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

// applyHelp returns the HELP text of kopgo_apply_total, with its leading
// space, so that the comparison is about the samples only.
func applyHelp(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "kopgo_apply_total" {
			return " " + f.GetHelp()
		}
	}
	t.Fatal("kopgo_apply_total is not registered")
	return ""
}

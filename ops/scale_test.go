package ops_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/kopgo/kopgo/ops"
)

// ScaledAlerts divides every For and every rate window, and changes
// nothing else: at factor 1 each expression means what the original does.
func TestScaledAlerts(t *testing.T) {
	same, err := ops.ScaledAlerts(1)
	if err != nil {
		t.Fatal(err)
	}
	scaled, err := ops.ScaledAlerts(20)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range ops.Alerts() {
		orig, err := parser.NewParser(parser.Options{}).ParseExpr(a.Expr)
		if err != nil {
			t.Fatal(err)
		}
		if same[i].Expr != orig.String() || same[i].For != a.For {
			t.Errorf("%s at factor 1: %s for %v; want %s for %v", a.Name, same[i].Expr, same[i].For, orig.String(), a.For)
		}
		if got, want := scaled[i].For, a.For/20; got != want {
			t.Errorf("%s at factor 20: for %v, want %v", a.Name, got, want)
		}
		if strings.Contains(a.Expr, "[10m]") && (strings.Contains(scaled[i].Expr, "[10m]") || !strings.Contains(scaled[i].Expr, "[30s]")) {
			t.Errorf("%s at factor 20: %s; want its [10m] windows as [30s]", a.Name, scaled[i].Expr)
		}
		if strings.Contains(a.Expr, "longer_than") && !strings.Contains(scaled[i].Expr, `longer_than="`) {
			t.Errorf("%s at factor 20: %s lost its longer_than bucket", a.Name, scaled[i].Expr)
		}
	}
	if got := scaled[2].For; got != 45*time.Second {
		t.Errorf("KopgoReconcileErrors at factor 20: for %v, want 45s", got)
	}
	if _, err := ops.ScaledAlerts(0); err == nil {
		t.Error("factor 0: no error")
	}
}

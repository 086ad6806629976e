package ops

import (
	"fmt"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
)

// ScaledAlerts returns [Alerts] with time compressed by factor, for tests
// that run a real operator for minutes rather than hours: every For and
// every range of a range selector or subquery ([10m]) is divided by factor,
// and so should the evaluation interval be ([EvalInterval] / factor).
// Thresholds stay as they are, and so do the longer_than buckets of the
// object-health gauges (5m, 15m), which kopgo computes in the operator and
// a rule cannot scale: a test reaches them through the conditions'
// lastTransitionTime instead. ops' real-run test (realrun_test.go) uses
// factor 20; docs/operations.md ("How the rules were proven") says why.
//
// The expressions are re-rendered by Prometheus's parser, so they read
// differently from the originals while meaning the same, ranges aside.
func ScaledAlerts(factor int) ([]Alert, error) {
	if factor < 1 {
		return nil, fmt.Errorf("scale alerts: factor %d: must be at least 1", factor)
	}
	alerts := Alerts()
	for i := range alerts {
		a := &alerts[i]
		expr, err := parser.NewParser(parser.Options{}).ParseExpr(a.Expr)
		if err != nil {
			return nil, fmt.Errorf("scale alert %s: %w", a.Name, err)
		}
		parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
			switch n := n.(type) {
			case *parser.MatrixSelector:
				n.Range = scale(n.Range, factor)
			case *parser.SubqueryExpr:
				n.Range = scale(n.Range, factor)
				n.Step = scale(n.Step, factor)
			}
			return nil
		})
		a.Expr = expr.String()
		a.For = scale(a.For, factor)
	}
	return alerts, nil
}

// scale divides d by factor, rounded down to a whole millisecond (the
// resolution of a PromQL duration).
func scale(d time.Duration, factor int) time.Duration {
	return (d / time.Duration(factor)).Truncate(time.Millisecond)
}

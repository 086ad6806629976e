package telemetry

import "github.com/kopgo/kopgo/observability"

// Metrics is observability.Metrics. kopgo's packages used to convert the
// public type to this one to record; the alias keeps that conversion
// compiling (it is now a no-op). New code calls the methods of
// observability.Metrics directly.
type Metrics = observability.Metrics

// Result is observability.ReconcileResult, under its former internal
// name.
type Result = observability.ReconcileResult

// The reconcile results, as observability defines them.
const (
	ResultSuccess  = observability.ResultSuccess
	ResultRequeue  = observability.ResultRequeue
	ResultConflict = observability.ResultConflict
	ResultError    = observability.ResultError
	ResultTerminal = observability.ResultTerminal
	ResultTimeout  = observability.ResultTimeout
	ResultPanic    = observability.ResultPanic
)

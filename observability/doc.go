// Package observability is kopgo's metrics, tracing and events, usable on
// their own in any controller.
//
// # Metrics
//
// [Metrics] registers, on controller-runtime's registry by default
// ([Default]) so that they are served next to controller-runtime's own:
//
//	kopgo_reconcile_total{controller,result}         result: success, requeue, conflict, error, terminal, timeout, panic
//	kopgo_reconcile_errors_total{controller,kind}    kind: a koperrors.Kind (NotFound, Conflict, ...)
//	kopgo_reconcile_duration_seconds{controller}     histogram, trace IDs as exemplars
//	kopgo_apply_total{controller,outcome}            Created, Updated, Unchanged
//	kopgo_gc_deletions_total{controller}
//
// Every label value comes from a closed set, never from an error message, so
// the number of series stays bounded. A conflict is counted as a result but
// not as an error; a timeout and a panic are errors.
//
// # Tracing
//
// [StartReconcile] opens a span per reconcile carrying the object's kind,
// namespace, name, uid and generation; [StartSpan] opens child spans for the
// work inside (apply, status, finalizers, gc) from the provider of the span
// in the context; [EndSpan] records the result. With no TracerProvider
// ([Tracer](nil)) every call is a no-op.
//
// # Events
//
// [Recorder] emits events.k8s.io/v1 events in one call per event:
// Normal(obj, reason, action, note) and Warning(...). [NewRecorder] sends them
// through client-go's events broadcaster, which folds repeats into one Event
// with a series count and never blocks or fails the caller. [FakeRecorder]
// keeps events in memory for tests; [Nop] drops them.
//
// A repeat, for the broadcaster, is an event about the same object (at the
// same resourceVersion) with the same type, reason, action and related
// object, whatever its note says: "ConfigMap a created" followed by
// "ConfigMap b created" under one reason shows only the first note, with a
// count of 2. Name the object each event concerns with [NormalRelated] (it
// becomes the event's related object, and the two stay apart), or give
// distinct happenings distinct reasons.
package observability

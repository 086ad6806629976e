// Package loop runs a reconciler.Reconciler as controller-runtime's
// reconcile.Reconciler: kopgo's reconcile loop. The controller Builder is
// its one user; nothing here is public API.
//
// One reconcile runs one way, and no step revisits an earlier one:
//
//	read       the object from the cache (gone: a pending cleanup, or nothing,
//	           and everything kept of it is forgotten); nothing new and
//	           nothing due, or a delay holds: nothing runs (wake.go); older
//	           than our own last write to it: deferred (ownwrites.go)
//	run        the finalizer before the first Reconcile, status.Begin, then
//	           Cleanup (being deleted) or Reconcile, under a deadline with
//	           panics recovered; the rest of the finalizer protocol
//	observe    whether a NotFound or a failed finalizer add means the object is gone
//	classify   the outcome into a decision (pure: classify)
//	write      status.Finish and one status patch, if the decision says so
//	settle     the decision and the write's error into what controller-runtime
//	           gets (pure: settle)
//	record     events, metrics, the span, the rate limiter's hint and the
//	           loop's own requeues, once
//
// The loop owns its controller's queue and rate limiter (see
// [Loop.ControllerOptions]). Every add to the queue says what it is, in
// one place (queue.go): news, a schedule, or an event the object's state
// judges; wake.go says what is done with it and why this mechanism. What
// the loop keeps per object (wake.go's objects: what woke it, what it
// acted on, its own writes, its failures) goes when the object does.
//
// A terminal failure is returned to
// controller-runtime as reconcile.TerminalError, which it neither retries
// nor lets carry a result, so the loop adds the requeue itself (the one
// the reconciler asked for, or the Stalled retry interval).
package loop

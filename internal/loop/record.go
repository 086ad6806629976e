package loop

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// record performs the side effects of a settled decision, once each: the
// log line, the Warning event, the rate limiter's hint, the loop's own
// requeue and the bookkeeping of pending cleanups.
func (l *Loop[T]) record(ctx context.Context, req reconcile.Request, obj T, a attempt, d decision) {
	// Every failure returned to controller-runtime is logged by it at
	// error level ("Reconciler error", with the object and reconcileID):
	// kopgo adds its decision at V(1) rather than a second error line.
	logger := log.FromContext(ctx).V(1)
	switch {
	case d.statusFailed:
		logger.Info("Writing status failed; will retry", "error", d.err.Error())
	case a.shutdown:
		log.FromContext(ctx).Info("Reconcile cut short by shutdown", "error", d.err.Error())
	case d.terminal:
		logger.Info("Reconcile failed terminally; Stalled until the object changes", "error", d.err.Error(), "retryAfter", d.self)
	case d.loud:
		logger.Info("Reconcile failed; retrying with backoff", "error", d.err.Error(), "retryAfter", d.retry)
	case d.err != nil:
		logger.Info("Conflict, retrying", "error", d.err.Error(), "conflicts", a.conflicts)
	}
	if d.warning != "" && a.phase != phaseGone {
		l.env.Recorder.Warning(obj, nil, d.warning, "Reconcile", d.note)
	}
	if a.finished && a.phase == phaseCleanup {
		l.env.Recorder.Normal(obj, nil, "CleanedUp", "Finalize", "cleanup finished; finalizer "+l.o.FinalizerName+" removed")
	}
	if a.phase == phaseGone && !a.finished {
		if d.forget {
			l.cleanedUp(req, obj.GetUID())
		} else {
			l.keepLastState(req, obj)
		}
	}
	if d.crErr != nil && !d.terminal {
		l.limiter.failed(req, d.retry > 0, d.retry, d.transient)
	}
	if d.self > 0 {
		l.requeueAfter(req, d.self)
	}
}

// keepLastState remembers obj as req's last state until its cleanup
// finishes.
func (l *Loop[T]) keepLastState(req reconcile.Request, obj T) {
	l.mu.Lock()
	l.lastState[req] = obj
	l.mu.Unlock()
}

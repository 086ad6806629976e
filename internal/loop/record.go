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
	logger := log.FromContext(ctx)
	switch {
	case d.statusFailed:
		logger.Error(d.err, "Writing status failed; will retry")
	case a.shutdown:
		logger.Info("Reconcile cut short by shutdown", "error", d.err.Error())
	case d.terminal:
		logger.Error(d.err, "Reconcile failed terminally; waiting for a change", "retryAfter", d.self)
	case d.loud:
		logger.Error(d.err, "Reconcile failed")
	case d.err != nil:
		logger.V(1).Info("Conflict, retrying", "error", d.err.Error(), "conflicts", a.conflicts)
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

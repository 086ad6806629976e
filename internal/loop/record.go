package loop

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// record performs the side effects of a settled decision, once each: the
// log line, the Warning event, the rate limiter's hint, the loop's own
// requeue and the bookkeeping of pending cleanups.
func (l *Loop[T]) record(ctx context.Context, req reconcile.Request, obj T, a attempt, d decision, stored []metav1.Condition) {
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
		logger.Info("Reconcile failed; retrying with backoff", "error", d.err.Error(), "retryAfter", d.retry.after, "retryNotBefore", d.retry.atLeast)
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
		l.limiter.failed(req, d.retry)
	}
	if d.self > 0 {
		l.requeueAfter(req, d.self)
	}
	switch {
	case a.phase == phaseGone && a.finished:
		l.forgetObject(req)
	case a.phase != phaseGone:
		var notBefore time.Time
		if d.hold > 0 {
			notBefore = time.Now().Add(d.hold)
		}
		l.objs.end(req.NamespacedName, obj.GetUID(), notBefore)
	}
	l.observeHealth(req, obj, a, d, stored)
}

// observeHealth reports the object's conditions as stored to the
// object-health gauges (observability.Metrics.ObserveObject), from the same
// decision that wrote them, or forgets an object that is gone.
func (l *Loop[T]) observeHealth(req reconcile.Request, obj T, a attempt, d decision, stored []metav1.Condition) {
	switch {
	case a.phase == phaseGone || a.phase == phaseNone || a.gone || a.finished:
		l.o.Metrics.ForgetObject(l.name, req.NamespacedName)
	case d.statusFailed || a.shutdown:
		// What is stored did not change: nothing to report.
	case d.writeStatus && stored == nil:
		l.o.Metrics.ForgetObject(l.name, req.NamespacedName) // gone meanwhile
	case d.writeStatus:
		l.o.Metrics.ObserveObject(l.name, req.NamespacedName, obj.GetUID(), stored)
	case a.setter != nil:
		// No write (a quiet conflict): what was read is what is stored.
		l.o.Metrics.ObserveObject(l.name, req.NamespacedName, obj.GetUID(), a.read)
	}
}

// keepLastState remembers obj as req's last state until its cleanup
// finishes.
func (l *Loop[T]) keepLastState(req reconcile.Request, obj T) {
	l.mu.Lock()
	l.lastState[req] = obj
	l.mu.Unlock()
}

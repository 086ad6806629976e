package loop

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/finalizers"
	"github.com/kopgo/kopgo/internal/calls"
	"github.com/kopgo/kopgo/internal/telemetry"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
)

// phase is what a reconcile runs.
type phase uint8

const (
	// phaseReconcile runs Reconcile.
	phaseReconcile phase = iota
	// phaseCleanup runs Cleanup: the object is being deleted and carries
	// the loop's finalizer.
	phaseCleanup
	// phaseGone runs Cleanup for an object deleted before its cleanup ran
	// (see pending.go), with its last known state.
	phaseGone
	// phaseNone runs nothing: the object is being deleted and nothing of
	// the loop's is on it.
	phaseNone
)

// attempt is what running the user's code produced, and what the loop
// observed right after.
type attempt struct {
	phase     phase
	action    reconciler.Action
	err       error
	abandoned bool // the call ran past its deadline and was left running
	shutdown  bool // the controller stopped while the call failed
	gone      bool // the object turned out deleted (or replaced)
	finished  bool // cleanup done, finalizer removed
	policy    time.Duration
	conflicts int
	failures  int // failures in a row, this one included

	// The status the loop maintains, for a status.Setter in phases
	// reconcile and cleanup.
	setter  status.Setter
	read    []metav1.Condition
	patcher *status.Patcher
}

// Reconcile implements reconcile.Reconciler: one reconcile, one way (see
// the package documentation).
func (l *Loop[T]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if !l.active.enter() {
		return reconcile.Result{}, nil // the controller stopped
	}
	defer l.active.leave()
	start := time.Now()
	if l.stillRunning(req) {
		// A call abandoned at its deadline still holds the object: never run
		// one object twice at once. Look again soon.
		log.FromContext(ctx).V(1).Info("Previous reconcile still running after its deadline; waiting for it")
		return reconcile.Result{RequeueAfter: abandonedPoll}, nil
	}
	obj := l.proto.DeepCopyObject().(T)
	ph := phaseReconcile
	if err := l.env.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, koperrors.Wrap(err, "read", kopmeta.ObjectRef{Kind: l.kind, Namespace: req.Namespace, Name: req.Name})
		}
		last, ok := l.pendingCleanup(req)
		if !ok {
			l.forgetObject(req) // gone: nothing to do
			return reconcile.Result{}, nil
		}
		obj, ph = last, phaseGone
	} else if !l.inScope(obj) {
		log.FromContext(ctx).V(1).Info("Outside the controller's label selector; not reconciled")
		l.o.Metrics.ForgetObject(l.name, req.NamespacedName)
		return reconcile.Result{}, nil
	} else if reason, after := l.objs.judge(req.NamespacedName, obj, start); !reason.runs() {
		// Nothing new since the last reconcile, or a delay holds: no
		// call, no write; a requeue already asked for stays asked for.
		l.o.Metrics.RecordSkip(l.name, reason.skipLabel())
		l.limiter.keepFailures(req)
		return reconcile.Result{RequeueAfter: after}, nil
	} else if after, ok := l.deferStale(ctx, req, obj); ok {
		l.objs.deferred(req.NamespacedName)
		return reconcile.Result{RequeueAfter: after}, nil
	}
	if ph != phaseGone {
		l.objs.begin(req.NamespacedName, obj)
	}
	ctx, span := telemetry.StartReconcile(ctx, l.o.Tracer, l.name, l.kind, obj)
	a := l.run(ctx, req, obj, ph)
	d := classify(a, l.o)
	var (
		werr   error
		stored []metav1.Condition
	)
	if d.writeStatus {
		stored, werr = l.writeStatus(ctx, req, obj, a, d.statusErr)
	}
	out := settle(d, werr, l.o.APIServer)
	l.record(ctx, req, obj, a, out, stored)
	l.o.Metrics.ObserveReconcile(ctx, l.name, out.result, out.err, time.Since(start))
	telemetry.EndSpan(span, out.result, out.err)
	return out.cr, out.crErr
}

// forgetObject drops everything the loop keeps of req's object, which is
// gone: what wakes it, its failures and backoff, its health gauges.
func (l *Loop[T]) forgetObject(req reconcile.Request) {
	l.objs.forget(req.NamespacedName)
	l.limiter.drop(req)
	l.o.Metrics.ForgetObject(l.name, req.NamespacedName)
}

// inScope reports whether obj is the controller's to reconcile: its labels
// match the selector, or it is being deleted with the loop's finalizer on
// (it left the selector after the controller took it on: its cleanup is
// owed). Events enqueue objects outside the selector: an owned child's or
// a watch's map to their parent whatever its labels, and with Setup the
// manager's cache holds every object of the kind.
func (l *Loop[T]) inScope(obj T) bool {
	if l.o.Selector == nil || l.o.Selector.Matches(labels.Set(obj.GetLabels())) {
		return true
	}
	return kopmeta.IsBeingDeleted(obj) && finalizers.Has(obj, l.o.FinalizerName)
}

// deferStale reports whether the reconcile of obj must wait, and for how
// long, because the cache holds it older than this process's last write
// to it (see ownwrites.go). Past [deferMax] it runs on what the cache has.
func (l *Loop[T]) deferStale(ctx context.Context, req reconcile.Request, obj T) (time.Duration, bool) {
	now := time.Now()
	stale, n, since := l.objs.stale(req.NamespacedName, obj, now)
	if !stale {
		return 0, false
	}
	if now.Sub(since) >= deferMax {
		l.objs.giveUp(req.NamespacedName)
		l.o.Metrics.RecordDeferral(l.name, true)
		log.FromContext(ctx).Info("Cache still older than our last write to the object; reconciling what it has",
			"waited", now.Sub(since).Round(time.Millisecond), "resourceVersion", obj.GetResourceVersion())
		return 0, false
	}
	l.o.Metrics.RecordDeferral(l.name, false)
	// controller-runtime forgets an object's failures after a reconcile
	// without error; a deferral is no success, so its backoff is kept.
	l.limiter.keepFailures(req)
	log.FromContext(ctx).V(2).Info("Cache older than our last write to the object; looking again shortly", "deferrals", n)
	return deferDelay(n), true
}

// run performs the finalizer protocol and the user's Reconcile or Cleanup.
// The user's work runs under a context that survives the controller's
// shutdown for the drain window.
func (l *Loop[T]) run(ctx context.Context, req reconcile.Request, obj T, ph phase) attempt {
	a := attempt{phase: ph}
	if ph == phaseReconcile && kopmeta.IsBeingDeleted(obj) {
		switch {
		case l.cleanup == nil:
			a.phase = phaseNone
		case finalizers.Has(obj, l.o.FinalizerName):
			a.phase = phaseCleanup
			if l.cleaned.has(obj.GetUID()) {
				// Its cleanup finished and the finalizer's removal is
				// not in the cache yet: one Cleanup per deletion.
				a.phase = phaseNone
			}
		case l.owesCleanupOf(req, obj):
			// Deleted past the finalizer (kubernetes#77988) with its
			// cleanup not finished.
			a.phase = phaseGone
		default:
			a.phase = phaseNone
		}
		if a.phase == phaseNone {
			// Nothing of ours to clean up, and nothing to say about an
			// object on its way out.
			return a
		}
	}
	uctx, release := drain(ctx, l.o.Drain)
	defer release()
	uctx, rec := withReconciling(uctx, req.NamespacedName)
	uctx = calls.Into(l.withChildLog(uctx, req, rec), func(op string, err error, d time.Duration) {
		rec.effects.Add(1)
		l.calls(op, err, d)
	})
	added := false
	if a.phase == phaseReconcile {
		var stop bool
		added, stop = l.ensureFinalizer(uctx, obj, &a)
		if stop {
			return a
		}
	}
	if setter, ok := any(obj).(status.Setter); ok && a.phase != phaseGone {
		a.setter, a.patcher = setter, status.NewPatcher(obj)
		a.read = status.Begin(setter)
	}
	switch {
	case a.err != nil:
		// The finalizer could not be added: nothing may be made that its
		// cleanup would have to undo.
	case a.phase != phaseReconcile:
		l.runCleanup(uctx, req, obj, &a)
	default:
		a.action, a.abandoned, a.err = l.call(uctx, req, func(c context.Context) (reconciler.Action, error) {
			return l.r.Reconcile(c, obj, l.env)
		})
		if added && !a.abandoned && koperrors.IsTerminal(a.err) && rec.effects.Load() == 0 {
			l.dropFinalizer(uctx, obj)
		}
	}
	a.shutdown = a.err != nil && ctx.Err() != nil
	if a.err != nil && !a.gone && !a.abandoned && koperrors.KindOf(a.err) == koperrors.NotFound && a.phase != phaseGone {
		// A NotFound may be about the object itself, deleted meanwhile:
		// then nothing failed.
		a.gone, _ = l.live(uctx, obj)
	}
	if a.err != nil && !a.gone && !a.shutdown {
		a.conflicts, a.failures = l.countFailure(req, a.err)
		if l.policy != nil {
			a.policy = l.policy.RetryAfter(obj, a.err, a.failures)
		}
	} else {
		l.countFailure(req, nil)
	}
	return a
}

// ensureFinalizer puts the loop's finalizer on obj before its Reconcile
// runs, so that whatever Reconcile makes is covered by a cleanup even if
// the process dies the moment after (a finalizer added after Reconcile
// returned left that window open: a SIGKILL inside Reconcile, the object
// deleted while the operator was down, and the external entry Reconcile
// had made was never cleaned up). obj becomes the object as stored with
// the finalizer. added reports whether this reconcile added it; stop, that
// Reconcile must not run: the object is gone or being deleted (nothing of
// ours can exist yet), or the add failed (a.err).
func (l *Loop[T]) ensureFinalizer(ctx context.Context, obj T, a *attempt) (added, stop bool) {
	if l.cleanup == nil || finalizers.Has(obj, l.o.FinalizerName) {
		return false, false
	}
	_, err := finalizers.Add(ctx, l.client, obj, l.o.FinalizerName)
	if err != nil {
		gone, deleting := l.live(ctx, obj)
		if gone || deleting || koperrors.KindOf(err) == koperrors.NotFound {
			a.phase, a.gone = phaseNone, gone
			return false, true
		}
		a.err = err
		return false, false
	}
	key := client.ObjectKeyFromObject(obj)
	l.objs.wrote(key, obj.GetUID(), obj.GetResourceVersion())
	l.objs.rebase(key, obj) // what the reconciler now gets
	l.added(obj.GetUID())
	return true, false
}

// dropFinalizer removes the finalizer this reconcile added, after a
// terminal failure of a reconcile that wrote nothing (through Env.Client
// or the Applier) and called no external system: an object whose spec is
// invalid from the start made nothing to clean up, and is deleted at once,
// without a Cleanup call. One that wrote or called (an external resource
// created, then a 401 on reading it back) keeps the finalizer. A
// failure to remove it is only logged: the finalizer then stays until the
// object is valid or deleted (Cleanup runs then).
func (l *Loop[T]) dropFinalizer(ctx context.Context, obj T) {
	cur := obj.DeepCopyObject().(T) // the patch answers with the stored status
	if _, err := finalizers.Remove(ctx, l.client, cur, l.o.FinalizerName); err != nil {
		log.FromContext(ctx).Info("Removing the finalizer after a terminal failure failed; it stays", "error", err.Error())
		return
	}
	key := client.ObjectKeyFromObject(cur)
	l.objs.wrote(key, cur.GetUID(), cur.GetResourceVersion())
	l.objs.setFinalizer(key, false)
	obj.SetResourceVersion(cur.GetResourceVersion())
	obj.SetFinalizers(cur.GetFinalizers())
	l.forgetAdded(obj.GetUID())
}

// runCleanup calls Cleanup and, once it reports done, removes the loop's
// finalizer (an object already gone has none left to remove).
func (l *Loop[T]) runCleanup(ctx context.Context, req reconcile.Request, obj T, a *attempt) {
	a.action, a.abandoned, a.err = l.call(ctx, req, func(c context.Context) (reconciler.Action, error) {
		return l.cleanup.Cleanup(c, obj, l.env)
	})
	if _, requeue := a.action.When(); a.err != nil || a.abandoned || requeue {
		return
	}
	if a.phase == phaseCleanup {
		// Remembered before the finalizer goes: the API server deletes
		// the object as it accepts the patch, and the delete event (whose
		// object still lists the finalizer, as last stored) often comes
		// before the patch's answer. It must not be taken for a deletion
		// past the finalizer (a second Cleanup).
		uid := obj.GetUID()
		l.cleaned.add(uid)
		if _, err := finalizers.Remove(ctx, l.client, obj, l.o.FinalizerName); err != nil {
			l.cleaned.remove(uid)
			a.err = err
			return
		}
		l.objs.wrote(req.NamespacedName, obj.GetUID(), obj.GetResourceVersion())
	}
	l.cleanedUp(req, obj.GetUID())
	a.finished = true
}

// live reads obj from the API server (not the cache, which may lag) and
// reports whether it is gone (or replaced by another of the same name) or
// being deleted. A failed read says neither. An operator without get on
// its primary kind reads the cache instead (kubebuilder's markers for a
// kind usually include get).
func (l *Loop[T]) live(ctx context.Context, obj T) (gone, deleting bool) {
	var r client.Reader = l.env.Client
	if l.env.Reader != nil {
		r = l.env.Reader
	}
	cur := l.proto.DeepCopyObject().(T)
	err := r.Get(ctx, client.ObjectKeyFromObject(obj), cur)
	if apierrors.IsForbidden(err) && r != l.env.Client {
		// No get on the primary kind: the cache's word, which may lag by
		// the watch's delay.
		err = l.env.Client.Get(ctx, client.ObjectKeyFromObject(obj), cur)
	}
	switch {
	case apierrors.IsNotFound(err):
		return true, false
	case err != nil:
		return false, false
	case cur.GetUID() != obj.GetUID():
		return true, false
	}
	return false, kopmeta.IsBeingDeleted(cur)
}

// writeStatus records the outcome in status: status.Finish and one patch,
// or none when nothing changed. The user's deadline may have passed: the
// write gets a short window of its own, set only when there is something
// to write. After an abandoned call the user's goroutine may still change
// obj, so a fresh copy is read (in a window of its own) and written. It
// returns the conditions the object holds once it is done (nil when the
// object turned out gone), for the object-health gauges.
func (l *Loop[T]) writeStatus(ctx context.Context, req reconcile.Request, obj T, a attempt, err error) ([]metav1.Condition, error) {
	setter, read, patcher := a.setter, a.read, a.patcher
	if a.abandoned {
		fresh, gerr := l.readFresh(ctx, req)
		if gerr != nil {
			return nil, koperrors.Wrap(gerr, "read", kopmeta.RefOf(obj))
		}
		setter = any(fresh).(status.Setter)
		patcher = status.NewPatcher(fresh)
		read = status.Begin(setter)
	}
	if a.phase == phaseReconcile || err != nil {
		status.Finish(setter, read, err)
	}
	if patcher.Unchanged(setter) {
		return setter.GetConditions(), nil // the steady state: no write, and no deadline to set for one
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.o.StatusTimeout)
	defer cancel()
	sent, perr := patcher.Patch(wctx, l.client, setter)
	if sent && perr == nil {
		l.objs.wrote(req.NamespacedName, setter.GetUID(), setter.GetResourceVersion())
	}
	switch {
	case perr != nil && apierrors.IsNotFound(perr):
		return nil, nil // gone meanwhile: there is no status to keep
	case perr != nil:
		return nil, perr
	}
	return setter.GetConditions(), nil
}

// readFresh reads req's object from the cache, within the status timeout
// even after ctx ended.
func (l *Loop[T]) readFresh(ctx context.Context, req reconcile.Request) (T, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.o.StatusTimeout)
	defer cancel()
	fresh := l.proto.DeepCopyObject().(T)
	return fresh, l.env.Client.Get(rctx, req.NamespacedName, fresh)
}

package loop

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kopgo/kopgo/finalizers"
)

// Cleanups the API server skipped.
//
// kube-apiserver can delete an object whose finalizer patch it has just
// accepted (kubernetes/kubernetes#77988): a DELETE that read the object
// before the patch removes it without waiting. The object is then gone
// before Cleanup ran, and the reconcile that follows finds nothing. The
// loop therefore remembers the UIDs it added its finalizer to, and the
// delete handler keeps the last state of such an object when it is deleted
// with the finalizer still on it or while this process believes it is:
// the next reconcile of that name runs Cleanup with that state (once, until
// it reports done).

// DeleteHandler returns the event handler that notices objects deleted
// before their cleanup ran. The Builder adds it as a watch of T beside the
// primary one.
func (l *Loop[T]) DeleteHandler() handler.TypedEventHandler[client.Object, reconcile.Request] {
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			obj, ok := e.Object.(T)
			if !ok || l.cleanup == nil || !l.owesCleanup(obj) {
				return
			}
			req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
			l.mu.Lock()
			l.lastState[req] = obj
			l.mu.Unlock()
			q.Add(req)
		},
	}
}

// owesCleanup reports whether obj, just deleted, left without its cleanup:
// it still carries the finalizer, or this process added it, never saw its
// cleanup finish, and the object went without a graceful deletion (one
// whose finalizer someone removed by hand, to let it go, carries a
// deletionTimestamp and is not owed anything).
func (l *Loop[T]) owesCleanup(obj T) bool {
	if finalizers.Has(obj, l.o.FinalizerName) {
		return true
	}
	if obj.GetDeletionTimestamp() != nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.finalized[obj.GetUID()]
	return ok
}

// added records that this process added its finalizer to uid.
func (l *Loop[T]) added(uid types.UID) {
	l.mu.Lock()
	l.finalized[uid] = struct{}{}
	l.mu.Unlock()
}

// hasAdded reports whether this process added its finalizer to uid.
func (l *Loop[T]) hasAdded(uid types.UID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.finalized[uid]
	return ok
}

// cleanedUp forgets uid and req's last state: its cleanup finished.
func (l *Loop[T]) cleanedUp(req reconcile.Request, uid types.UID) {
	l.mu.Lock()
	delete(l.finalized, uid)
	if last, ok := l.lastState[req]; ok && last.GetUID() == uid {
		delete(l.lastState, req)
	}
	l.mu.Unlock()
}

// pendingCleanup returns the last state of req's object if it was deleted
// before its cleanup finished.
func (l *Loop[T]) pendingCleanup(req reconcile.Request) (T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	last, ok := l.lastState[req]
	return last, ok
}

// owesCleanupOf reports whether obj, being deleted without the loop's
// finalizer, still owes the cleanup a Reconcile of it started: its last
// state is kept for req, with the same UID.
func (l *Loop[T]) owesCleanupOf(req reconcile.Request, obj T) bool {
	last, ok := l.pendingCleanup(req)
	return ok && last.GetUID() == obj.GetUID()
}

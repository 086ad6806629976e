package loop

import (
	"context"
	"sync"
	"time"

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
			if !ok {
				return
			}
			if l.cleanup == nil {
				return
			}
			if !l.owesCleanup(obj) {
				// Nothing owed: what was kept for its cleanup goes with
				// it (the delete event is the last word on that UID).
				l.cleaned.remove(obj.GetUID())
				l.forgetAdded(obj.GetUID())
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
// its cleanup did not finish in this process (the delete event of an
// object whose cleanup finished carries its last stored state, which still
// lists the finalizer its cleanup removed), and it still carries the
// finalizer, or this process added it and the object went without a
// graceful deletion (one whose finalizer someone removed by hand, to let
// it go, carries a deletionTimestamp and is not owed anything).
func (l *Loop[T]) owesCleanup(obj T) bool {
	if l.cleaned.has(obj.GetUID()) {
		return false
	}
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

// forgetAdded forgets that this process added its finalizer to uid (it
// removed it again).
func (l *Loop[T]) forgetAdded(uid types.UID) {
	l.mu.Lock()
	delete(l.finalized, uid)
	l.mu.Unlock()
}

// cleanedUp forgets uid and req's last state: its cleanup finished. An
// object that still existed when it did is remembered in l.cleaned (see
// [Loop.runCleanup]) until its delete event.
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

// cleanedMemory is how long the loop remembers at least that an object's
// cleanup finished, should its delete event never come: long enough for
// any reconcile queued before it, which may still show the finalizer the
// cleanup removed. The delete event forgets it at once.
const cleanedMemory = 10 * time.Minute

// uidSet remembers UIDs for at least a while: two generations, the older
// dropped whole when the newer is that old, so memory stays bounded by
// what was added in two periods, at no cost per lookup.
type uidSet struct {
	mu        sync.Mutex
	period    time.Duration
	cur, prev map[types.UID]struct{}
	rotatedAt time.Time
	now       func() time.Time
}

func newUIDSet(period time.Duration) *uidSet {
	return &uidSet{period: period, cur: map[types.UID]struct{}{}, now: time.Now, rotatedAt: time.Now()}
}

// add remembers uid for at least the set's period.
func (s *uidSet) add(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := s.now(); now.Sub(s.rotatedAt) >= s.period {
		s.prev, s.cur, s.rotatedAt = s.cur, map[types.UID]struct{}{}, now
	}
	s.cur[uid] = struct{}{}
}

// remove forgets uid.
func (s *uidSet) remove(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cur, uid)
	delete(s.prev, uid)
}

// has reports whether uid was added within the last one or two periods.
func (s *uidSet) has(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.cur[uid]
	if !ok {
		_, ok = s.prev[uid]
	}
	return ok
}

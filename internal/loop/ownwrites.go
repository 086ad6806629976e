package loop

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kopgo/kopgo/internal/writelog"
)

// Own writes: read them, and do not reconcile them twice.
//
// The loop writes to the object it reconciles (its finalizer before the
// first Reconcile, the status after each one) and so may the reconciler,
// through Env.Client. The informer's cache learns of each write a few
// milliseconds later, through the watch. Two rules follow, both kept by
// one log per object of the writes this process made and the cache has
// not yet shown:
//
//   - Read your own writes. A reconcile whose cached object is older than
//     the last write this process made to it does not run: it is deferred
//     ([Loop.deferStale]) until the cache has caught up, so a Reconcile or
//     Cleanup never acts on a state that predates what it already did (an
//     external ID minted and recorded in status, a finalizer removed after
//     the cleanup finished). Versions are compared as Kubernetes 1.35+
//     defines them (k8s.io/apimachinery/pkg/util/resourceversion); where
//     they are not comparable, the read is taken as it is (fail open). The
//     wait is bounded ([deferMax]); past it the reconcile runs on what the
//     cache has. This is KEP-5647's rule for kube-controller-manager,
//     applied per object: one object waits, the controller does not.
//   - An own write whose reconcile accounted for it does not start
//     another. The loop's finalizer add and status write are made by a
//     reconcile that already acted on the state they produce; the update
//     event each causes is dropped ([Loop.OwnWritesPredicate]) when it
//     shows exactly that write: its old version is the one the write was
//     based on and its new version the one the write returned. An event
//     that shows anyone else's change in between is kept. The watch can
//     deliver an event before the write's response arrives: an event
//     based on a write still in flight is dropped provisionally, and
//     should the write return another version (someone else's change came
//     first), the loop enqueues the object itself.
//
// The reconciler's own writes through Env.Client (Update, Patch and their
// status forms, of the object being reconciled) are logged for the first
// rule only: their events still reconcile, since the loop cannot know what
// the reconciler meant by them. Writes through server-side apply with an
// apply configuration are not logged. Children applied with the Applier
// are logged for the second rule (see ChildWritesPredicate below).
//
// Why this shape. controller-runtime v0.25's experimental consistent
// client (client.CacheOptions.EnableReadYourWritesConsistency) makes the
// read itself wait for the cache: the worker blocks meanwhile, and its
// documented limits (a cache over several namespaces) are the setup many
// operators run. kube-controller-manager's mitigation (KEP-5647) and
// cluster-api's reconcile wrapper compare the version of the last write
// with what the informer has and requeue the key instead: nothing blocks,
// and that is what is done here, per object, with the versions of the
// writes themselves (no informer internals needed). The same log tells
// which watch events are our own, which neither of them does.

// deferFirst and deferMax bound the wait for a lagging cache: the first
// look again after deferFirst, doubling, until deferMax has passed since
// the first deferral; then the reconcile runs on what the cache has.
const (
	deferFirst   = 5 * time.Millisecond
	deferCeiling = 500 * time.Millisecond
	deferMax     = 10 * time.Second
)

// write is one write of this process to an object.
type write struct {
	base string // the version the write was made on; "": unknown
	rv   string // the version it returned; "": in flight
	// accounted writes are the loop's own (finalizer, status): their
	// events are dropped.
	accounted bool
	// seen is the new version of an event dropped while the write was in
	// flight.
	seen string
	// parent is the request to enqueue for an event dropped in error: the
	// object itself, or the parent of a child.
	parent reconcile.Request
}

// objWrites is the log of one object's writes the cache has not shown.
type objWrites struct {
	uid    types.UID
	writes []*write
	// last is the newest version this process wrote.
	last string
	// deferredSince is when a reconcile of the object was first deferred
	// for a lagging cache; zero: none is.
	deferredSince time.Time
	deferrals     int
}

// ownWrites is the loop's log of its writes, by object.
type ownWrites struct {
	mu   sync.Mutex
	objs map[types.NamespacedName]*objWrites
	// enqueue adds a request to the controller's queue.
	enqueue func(reconcile.Request)
}

func newOwnWrites(enqueue func(reconcile.Request)) *ownWrites {
	return &ownWrites{objs: map[types.NamespacedName]*objWrites{}, enqueue: enqueue}
}

// begin logs a write about to be sent to obj, made on obj's current
// version, and returns the entry to finish it with.
func (w *ownWrites) begin(obj client.Object, accounted bool) *write {
	key := client.ObjectKeyFromObject(obj)
	return w.beginKey(key, obj.GetUID(), obj.GetResourceVersion(), accounted, reconcile.Request{NamespacedName: key})
}

// beginKey logs a write about to be sent to the object at key with uid
// ("": not known yet, a create), made on version base ("": a create), for
// the reconcile of parent.
func (w *ownWrites) beginKey(key types.NamespacedName, uid types.UID, base string, accounted bool, parent reconcile.Request) *write {
	e := &write{base: base, accounted: accounted, parent: parent}
	w.mu.Lock()
	defer w.mu.Unlock()
	o := w.objs[key]
	if o == nil || uid != "" && o.uid != "" && o.uid != uid {
		o = &objWrites{uid: uid}
		w.objs[key] = o
	}
	o.writes = append(o.writes, e)
	return e
}

// finish records the outcome of write e to the object at key: the version
// it returned ("" when it failed or sent nothing). A provisionally dropped
// event that turns out not to be this write's is made good by enqueueing
// the object.
func (w *ownWrites) finish(key types.NamespacedName, e *write, rv string) {
	w.finishUID(key, e, "", rv)
}

// finishUID is finish for a write that learned the object's UID (a
// create).
func (w *ownWrites) finishUID(key types.NamespacedName, e *write, uid types.UID, rv string) {
	w.mu.Lock()
	o := w.objs[key]
	if o == nil {
		w.mu.Unlock()
		return
	}
	if o.uid == "" {
		o.uid = uid
	}
	missed := e.seen != "" && e.seen != rv
	if rv == "" || rv == e.base {
		// Nothing was written (a failure, or a write that changed
		// nothing, which the server answers with the same version and no
		// event).
		o.remove(e)
	} else {
		e.rv = rv
		if o.last == "" || newer(rv, o.last) {
			o.last = rv
		}
		if e.seen == rv {
			// Its event came first and was dropped: the cache holds rv.
			o.remove(e)
			o.caughtUp(rv)
		}
	}
	if len(o.writes) == 0 && o.last == "" {
		delete(w.objs, key)
	}
	w.mu.Unlock()
	if missed {
		w.enqueue(e.parent)
	}
}

// remove drops e from the log.
func (o *objWrites) remove(e *write) {
	for i, x := range o.writes {
		if x == e {
			o.writes = append(o.writes[:i], o.writes[i+1:]...)
			return
		}
	}
}

// observed handles an update event of an object from old to cur, as the
// cache now holds it, and reports whether the event must reconcile: false
// for an event that shows exactly one accounted write of this process.
func (w *ownWrites) observed(old, cur client.Object) bool {
	return w.observedAt(client.ObjectKeyFromObject(cur), cur.GetUID(), old.GetResourceVersion(), cur.GetResourceVersion())
}

// observedAt is observed for the object at key with uid, whose cache
// moved from version oldRV ("": a create event) to curRV.
func (w *ownWrites) observedAt(key types.NamespacedName, uid types.UID, oldRV, curRV string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	o := w.objs[key]
	if o == nil || o.uid != "" && o.uid != uid || oldRV == curRV {
		return true
	}
	keep := true
	for _, e := range o.writes {
		if !e.accounted || e.base != oldRV {
			continue
		}
		if e.rv == curRV {
			o.remove(e)
			keep = false
			break
		}
		if e.rv == "" && e.seen == "" {
			e.seen, keep = curRV, false // in flight: see finish
			break
		}
	}
	// The cache holds curRV now: writes up to it are read.
	o.caughtUp(curRV)
	if len(o.writes) == 0 && o.last == "" {
		delete(w.objs, key)
	}
	return keep
}

// caughtUp forgets what a cache at version rv has shown: the last write,
// if rv is not older, and finished writes not newer than rv.
func (o *objWrites) caughtUp(rv string) {
	if o.last != "" && !newer(o.last, rv) {
		o.last = ""
		o.deferredSince, o.deferrals = time.Time{}, 0
	}
	kept := o.writes[:0]
	for _, e := range o.writes {
		if e.rv == "" || newer(e.rv, rv) {
			kept = append(kept, e)
		}
	}
	o.writes = kept
}

// stale reports whether obj, as read from the cache, is older than the
// last write this process made to it, and if so for how many deferrals
// and since when it has waited. A deferral is counted by the call.
func (w *ownWrites) stale(obj client.Object, now time.Time) (stale bool, n int, since time.Time) {
	key := client.ObjectKeyFromObject(obj)
	w.mu.Lock()
	defer w.mu.Unlock()
	o := w.objs[key]
	if o == nil || o.last == "" {
		return false, 0, time.Time{}
	}
	if o.uid != obj.GetUID() || !newer(o.last, obj.GetResourceVersion()) {
		o.caughtUp(obj.GetResourceVersion())
		if o.uid != obj.GetUID() || len(o.writes) == 0 && o.last == "" {
			delete(w.objs, key)
		}
		return false, 0, time.Time{}
	}
	if o.deferredSince.IsZero() {
		o.deferredSince = now
	}
	o.deferrals++
	return true, o.deferrals, o.deferredSince
}

// giveUp forgets the last write of the object at key: the cache did not
// show it within deferMax, and the reconcile runs on what it has.
func (w *ownWrites) giveUp(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if o := w.objs[key]; o != nil {
		o.last, o.deferredSince, o.deferrals = "", time.Time{}, 0
	}
}

// forget drops the log of the object at key (it was deleted).
func (w *ownWrites) forget(key types.NamespacedName) {
	w.mu.Lock()
	delete(w.objs, key)
	w.mu.Unlock()
}

// size is the number of objects with writes in the log (for tests).
func (w *ownWrites) size() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.objs)
}

// newer reports whether version a is newer than b. Versions that are not
// comparable (not the integers Kubernetes 1.35+ guarantees) are never
// newer: the loop then takes what the cache has.
func newer(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err == nil && c > 0
}

// deferDelay is how long a reconcile deferred for the n-th time in a row
// waits before it looks again.
func deferDelay(n int) time.Duration {
	d := deferFirst << min(n-1, 16)
	return min(d, deferCeiling)
}

// OwnWritesPredicate returns the predicate the Builder puts on the
// primary watch: it drops the update events of the loop's own accounted
// writes (see the top of this file).
func (l *Loop[T]) OwnWritesPredicate() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld == nil || e.ObjectNew == nil {
			return true
		}
		return l.writes.observed(e.ObjectOld, e.ObjectNew)
	}}
}

// Children's writes.
//
// A reconcile's applies of children (through the Applier, which reports
// them in the reconcile's context, see internal/writelog) are logged per
// child kind the controller watches, so that the watch events they cause
// do not reconcile the parent again: the reconcile that made them already
// worked with what the apply returned. An event that shows anyone else's
// change (the Deployment controller's status, an edit) is kept, and so is
// every delete event.

// ChildWritesPredicate returns the predicate for the watch of the child
// kind gk (Owns, or an Owner's child kind): it drops the create and update
// events of the children's writes the controller's own reconciles made.
// It must be called before the controller starts.
func (l *Loop[T]) ChildWritesPredicate(gk schema.GroupKind) predicate.Predicate {
	w := l.children[gk]
	if w == nil {
		w = newOwnWrites(func(req reconcile.Request) { l.requeueAfter(req, 0) })
		l.children[gk] = w
	}
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool {
			return e.Object == nil || w.observedAt(client.ObjectKeyFromObject(e.Object), e.Object.GetUID(), "", e.Object.GetResourceVersion())
		},
		UpdateFunc: func(e event.UpdateEvent) bool {
			if e.ObjectOld == nil || e.ObjectNew == nil {
				return true
			}
			return w.observed(e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(e event.DeleteEvent) bool {
			if e.Object != nil {
				w.forget(client.ObjectKeyFromObject(e.Object))
			}
			return true
		},
	}
}

// childLog is the writelog.Log of one reconcile: it logs the children's
// writes of the kinds the controller watches, for the reconcile of parent.
type childLog[T client.Object] struct {
	l      *Loop[T]
	parent reconcile.Request
}

// Begin implements writelog.Log.
func (c childLog[T]) Begin(gk schema.GroupKind, key types.NamespacedName, uid types.UID, base string) writelog.Done {
	w := c.l.children[gk]
	if w == nil {
		return func(types.UID, string) {}
	}
	e := w.beginKey(key, uid, base, true, c.parent)
	return func(uid types.UID, rv string) { w.finishUID(key, e, uid, rv) }
}

// withChildLog returns ctx carrying the child log of req's reconcile, when
// the controller watches child kinds.
func (l *Loop[T]) withChildLog(ctx context.Context, req reconcile.Request) context.Context {
	if len(l.children) == 0 {
		return ctx
	}
	return writelog.Into(ctx, childLog[T]{l: l, parent: req})
}

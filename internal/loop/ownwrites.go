package loop

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kopgo/kopgo/internal/writelog"
)

// Own writes: read them, and know the children's echoes.
//
// Read your own writes. The loop writes to the object it reconciles (its
// finalizer before the first Reconcile, the status after each one) and so
// may the reconciler, through Env.Client. The informer's cache learns of
// each write a few milliseconds later, through the watch. A reconcile
// whose cached object is older than the last write this process made to
// it does not run: it is deferred ([Loop.deferStale]) until the cache has
// caught up, so a Reconcile or Cleanup never acts on a state that
// predates what it already did (an external ID minted and recorded, a
// finalizer removed after the cleanup finished). Versions are compared as
// Kubernetes 1.35+ defines them (k8s.io/apimachinery/pkg/util/resourceversion);
// where they are not comparable, the read is taken as it is (fail open).
// The wait is bounded ([deferMax]); past it the reconcile runs on what the
// cache has. This is KEP-5647's rule for kube-controller-manager, applied
// per object: one object waits, the controller does not.
// controller-runtime v0.25's experimental consistent client makes the
// read itself wait (the worker blocks meanwhile, and a cache over several
// namespaces is outside its documented limits); here the key is requeued
// instead, as KEP-5647 and cluster-api's reconcile wrapper do, with the
// versions of the writes themselves (no informer internals needed).
//
// Children's echoes. A child's watch event whose object is exactly the
// state a reconcile of its parent got back from the Applier (same UID,
// same resourceVersion: one state of one object) shows the parent's code
// nothing it has not seen, so it wakes the parent without news (see
// wake.go). The Applier reports its writes through the reconcile's context
// (internal/writelog); an event that arrives before the write's answer is
// judged when the answer comes, and if it showed another state the parent
// is woken with news then. Anything else (a create, change or deletion by
// anyone else, a child the Applier wrote for another caller) is news. A
// Syncer reads its children from the cache, not from the Applier's
// answers, so its applies are not reported and each of their events is
// news.

// deferFirst and deferMax bound the wait for a lagging cache: the first
// look again after deferFirst, doubling, until deferMax has passed since
// the first deferral; then the reconcile runs on what the cache has.
const (
	deferFirst   = 5 * time.Millisecond
	deferCeiling = 500 * time.Millisecond
	deferMax     = 10 * time.Second
)

// wrote records that this process wrote version rv of the object at key
// with uid.
func (s *objects) wrote(key types.NamespacedName, uid types.UID, rv string) {
	if rv == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stateOf(key, uid)
	if st.last == "" || newer(rv, st.last) {
		st.last = rv
	}
}

// stale reports whether obj, as read from the cache, is older than the
// last write this process made to it, and if so for how many deferrals
// and since when it has waited. A deferral is counted by the call.
func (s *objects) stale(key types.NamespacedName, obj client.Object, now time.Time) (stale bool, n int, since time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.m[key]
	if st == nil || st.last == "" {
		return false, 0, time.Time{}
	}
	if st.uid != obj.GetUID() || !newer(st.last, obj.GetResourceVersion()) {
		st.last, st.deferredSince, st.deferrals = "", time.Time{}, 0
		return false, 0, time.Time{}
	}
	if st.deferredSince.IsZero() {
		st.deferredSince = now
	}
	st.deferrals++
	return true, st.deferrals, st.deferredSince
}

// giveUp forgets the last write of the object at key: the cache did not
// show it within deferMax, and the reconcile runs on what it has.
func (s *objects) giveUp(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.m[key]; st != nil {
		st.last, st.deferredSince, st.deferrals = "", time.Time{}, 0
	}
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

// childKey names a child object.
type childKey struct {
	gk  schema.GroupKind
	key types.NamespacedName
}

// echo is the last write a reconcile made to one child.
type echo struct {
	uid  types.UID
	rv   string // the version the write returned; "": in flight
	seen string // the version of an event that came while it was in flight
	// parent is the request to wake with news when an event judged
	// provisionally turns out to show another state.
	parent reconcile.Request
}

// echoes are the children's writes whose events have not come yet.
type echoes struct {
	mu sync.Mutex
	m  map[childKey]*echo
	// news wakes a parent with news.
	news func(reconcile.Request)
}

func newEchoes(news func(reconcile.Request)) *echoes {
	return &echoes{m: map[childKey]*echo{}, news: news}
}

// begin records a write about to be sent to the child k (uid "": a
// create) by the reconcile of parent.
func (e *echoes) begin(k childKey, uid types.UID, parent reconcile.Request) *echo {
	w := &echo{uid: uid, parent: parent}
	e.mu.Lock()
	e.m[k] = w
	e.mu.Unlock()
	return w
}

// done records what the write w to k returned ("" for both: it failed or
// sent nothing). An event judged provisionally while it was in flight
// that showed another state wakes the parent with news.
func (e *echoes) done(k childKey, w *echo, uid types.UID, rv string) {
	e.mu.Lock()
	missed := w.seen != "" && w.seen != rv
	if e.m[k] == w {
		switch {
		case rv == "" || w.seen != "":
			delete(e.m, k) // nothing to wait for, or its event came first
		default:
			w.rv = rv
			if w.uid == "" {
				w.uid = uid
			}
		}
	}
	e.mu.Unlock()
	if missed {
		e.news(w.parent)
	}
}

// event judges a create or update event of the child k showing version
// rv of the object with uid: whether it is news to the child's parent.
func (e *echoes) event(k childKey, uid types.UID, rv string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	w := e.m[k]
	switch {
	case w == nil:
		return true
	case w.uid != "" && w.uid != uid:
		delete(e.m, k)
		return true
	case w.rv == "" && w.seen == "":
		w.seen = rv // judged when the answer comes (done)
		return false
	case w.rv == "":
		return true
	case rv == w.rv:
		delete(e.m, k) // the state the reconcile got back
		return false
	case newer(w.rv, rv):
		return false // older than what the reconcile got back
	}
	delete(e.m, k)
	return true
}

// forget drops what is kept of the child k (it was deleted).
func (e *echoes) forget(k childKey) {
	e.mu.Lock()
	delete(e.m, k)
	e.mu.Unlock()
}

// size is the number of children kept (for tests).
func (e *echoes) size() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.m)
}

// childLog is the writelog.Log of one reconcile: it records the
// children's writes of the kinds the controller watches as Owns, for the
// reconcile of parent.
type childLog[T client.Object] struct {
	l      *Loop[T]
	parent reconcile.Request
	r      *reconciling // counts every write, of any kind
}

// Begin implements writelog.Log.
func (c childLog[T]) Begin(gk schema.GroupKind, key types.NamespacedName, uid types.UID, _ string) writelog.Done {
	c.r.effects.Add(1)
	if _, ok := c.l.owned[gk]; !ok {
		return func(types.UID, string) {}
	}
	k := childKey{gk: gk, key: key}
	w := c.l.echoes.begin(k, uid, c.parent)
	return func(uid types.UID, rv string) { c.l.echoes.done(k, w, uid, rv) }
}

// withChildLog returns ctx carrying the child log of req's reconcile r:
// the Applier's writes are counted, and those of the child kinds the
// controller watches recorded.
func (l *Loop[T]) withChildLog(ctx context.Context, req reconcile.Request, r *reconciling) context.Context {
	return writelog.Into(ctx, childLog[T]{l: l, parent: req, r: r})
}

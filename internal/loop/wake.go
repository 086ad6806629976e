package loop

import (
	"hash/maphash"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/finalizers"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// What wakes an object.
//
// Every watch event and every requeue reaches the queue: nothing is
// dropped on a guess about who wrote what. Informers promise no event per
// write (after a relist, several changes arrive as one update), so an
// event that looks like the echo of our own write may carry someone
// else's change; only the object's state can tell. The decision is made
// once, when a reconcile of the object is about to run ([objects.judge]),
// from what the loop keeps per object:
//
//   - acted: a fingerprint of the object as the last completed reconcile
//     acted on it (generation, deletion, labels, annotations, the loop's
//     finalizer; the resourceVersion where generation cannot tell a change
//     of the desired state), with the metadata the reconcile's own writes
//     sent folded in. A cached object whose fingerprint differs carries a
//     change the user's code has not seen: the wake-up runs. Merged events
//     cannot hide anything here, since the state is compared, not the
//     event.
//   - news: something the fingerprint cannot show changed: an event of a
//     related object (a child not in the state its parent's reconcile got
//     from the Applier, an object watched with Watch or References, a
//     delete, any watch a user added) or the informer's resync. Every add
//     to the queue that is not the primary's own event or a scheduled
//     requeue sets it (see queue.go): a source kopgo does not know about
//     wakes the object as news, never as an echo.
//   - due: when the next reconcile was asked for (RequeueAfter, the rate
//     limiter's backoff, the Stalled retry): every scheduled add to the
//     queue records it. A wake-up with nothing new runs only once it is
//     due; before that it returns the rest of the wait, so that the queue,
//     which merges an immediate add with a delayed one, keeps the
//     schedule.
//   - notBefore: the delay the last failure's error carried (a provider's
//     Retry-After, [koperrors.RetryAfterOf]). It holds for every wake-up,
//     news included: the system asked not to be called before then.
//
// A wake-up that runs nothing costs a cache read and a map lookup: no
// write, no external call, no call of the user's code. It is counted in
// kopgo_reconcile_skipped_total by reason.
//
// Why not the anchors as they are. controller-runtime's reconcileHandler
// delivers every event and leaves the echo of one's own status write to
// predicates (kubebuilder's GenerationChangedPredicate), which cannot tell
// a foreign label from our own annotation, and it lets any event cut a
// backoff short (an immediate add merges with the delayed one).
// java-operator-sdk 5.5 filters its own events by matching the versions
// its writes returned against the cache, which is what kopgo did until
// this rule: after a relist the old version of an update is our write's
// base and the new one its result, and a foreign change between them is
// dropped with the echo. KEP-5647 and cluster-api's reconcile wrapper only
// wait for a cache that lags a write (kopgo keeps that: [Loop.deferStale]).
// Comparing the object's state with what the last reconcile acted on is
// the one rule that needs no guess about the source of an event.

// fingerprint is what the loop compares to tell whether an object changed
// in a way its reconciler must see. Two objects with the same fingerprint
// ask the same of the reconciler.
type fingerprint struct {
	generation  int64
	rv          string // only where generation cannot tell (see [objects.fingerprint])
	labels      uint64
	annotations uint64
	deleting    bool
	finalizer   bool // carries the loop's finalizer
}

// seed hashes labels and annotations; one per process.
var seed = maphash.MakeSeed()

// hashMap hashes a string map independently of its order: the sum of its
// entries' hashes (a collision, about 1 in 2^64 per pair of maps, costs
// at most one wake-up judged to have nothing new).
func hashMap(m map[string]string) uint64 {
	var sum uint64
	for k, v := range m {
		var h maphash.Hash
		h.SetSeed(seed)
		h.WriteString(k)
		h.WriteByte(0)
		h.WriteString(v)
		sum += h.Sum64()
	}
	return sum
}

// objState is what the loop keeps of one object between its reconciles.
// All of it goes when the object does.
type objState struct {
	uid types.UID

	// Read your own writes (ownwrites.go): the newest version this
	// process wrote, and the deferrals of a reconcile for a lagging cache.
	last          string
	deferredSince time.Time
	deferrals     int

	// What wakes the object (see the top of this file).
	acted     fingerprint
	hasActed  bool
	running   fingerprint // the reconcile in flight, own writes folded in
	base      string      // the version the reconcile in flight read, or its own last write made on it
	isRunning bool
	news      bool
	due       time.Time
	notBefore time.Time
	// lookAgain marks the next schedule as the loop's own look again at
	// an object whose cache lagged (a deferral), not a requeue asked for.
	lookAgain bool

	// Failures in a row, and the optimistic-lock conflicts among the
	// last ones.
	failures, conflicts int
}

// objects is the loop's per-object memory.
type objects struct {
	mu        sync.Mutex
	m         map[types.NamespacedName]*objState
	finalizer string
	// everyVersion makes every new resourceVersion news: the primary's
	// event filter is the user's, who may want status changes seen.
	everyVersion bool
}

func newObjects(finalizer string, everyVersion bool) *objects {
	return &objects{m: map[types.NamespacedName]*objState{}, finalizer: finalizer, everyVersion: everyVersion}
}

// fingerprint returns obj's fingerprint. The resourceVersion is part of it
// for kinds without metadata.generation (ConfigMap, Secret: their data
// changes leave it alone) and when the user's event filter replaced
// kopgo's.
func (s *objects) fingerprint(obj client.Object) fingerprint {
	f := fingerprint{
		generation:  obj.GetGeneration(),
		labels:      hashMap(obj.GetLabels()),
		annotations: hashMap(obj.GetAnnotations()),
		deleting:    kopmeta.IsBeingDeleted(obj),
		finalizer:   s.finalizer != "" && finalizers.Has(obj, s.finalizer),
	}
	if f.generation == 0 || s.everyVersion {
		f.rv = obj.GetResourceVersion()
	}
	return f
}

// stateOf returns key's state for uid, a fresh one if there is none or it
// was another object's of the same name. Call with s.mu held.
func (s *objects) stateOf(key types.NamespacedName, uid types.UID) *objState {
	st := s.m[key]
	switch {
	case st == nil:
		st = &objState{uid: uid}
		s.m[key] = st
	case uid != "" && st.uid != "" && st.uid != uid:
		// Another object of the same name: what was kept was the old
		// one's, and a new object is news.
		st = &objState{uid: uid, news: true}
		s.m[key] = st
	case st.uid == "":
		st.uid = uid
	}
	return st
}

// wakeReason says why a wake-up runs the reconciler, or why it does not.
type wakeReason uint8

const (
	wakeNew        wakeReason = iota // first reconcile of the object in this process
	wakeChanged                      // the object's fingerprint differs from what was acted on
	wakeNews                         // a related object changed, or a resync
	wakeDue                          // a requeue that was asked for is due
	skipNothing                      // nothing new, nothing due
	skipNotDue                       // nothing new; a requeue is due later
	skipRetryAfter                   // the last error's own delay holds
)

// runs reports whether r runs the reconciler.
func (r wakeReason) runs() bool { return r <= wakeDue }

// skipLabel is r's value of the reason label of
// kopgo_reconcile_skipped_total.
func (r wakeReason) skipLabel() string {
	switch r {
	case skipNotDue:
		return "not_due"
	case skipRetryAfter:
		return "retry_after"
	}
	return "nothing_new"
}

// judge decides whether a wake-up of obj (as the cache has it) runs the
// reconciler at now, and if it does not, how long until a requeue that is
// already asked for (0: none). It changes nothing; [objects.begin] marks
// the run.
func (s *objects) judge(key types.NamespacedName, obj client.Object, now time.Time) (wakeReason, time.Duration) {
	fp := s.fingerprint(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stateOf(key, obj.GetUID())
	r, wait := st.decide(fp, now)
	if r.runs() && now.Before(st.notBefore) {
		// Something would run, but the error asked for no call before
		// then: it runs then (news and changes stay until a run).
		return skipRetryAfter, st.notBefore.Sub(now)
	}
	return r, wait
}

// decide is [objects.judge] before the error's own delay.
func (st *objState) decide(fp fingerprint, now time.Time) (wakeReason, time.Duration) {
	switch {
	case !st.hasActed:
		return wakeNew, 0
	case st.acted != fp:
		return wakeChanged, 0
	case st.news:
		return wakeNews, 0
	case st.due.IsZero():
		return skipNothing, 0
	case !now.Before(st.due):
		return wakeDue, 0
	}
	return skipNotDue, st.due.Sub(now)
}

// begin marks the start of a reconcile of obj: what it acts on, with the
// news and the schedule it consumes.
func (s *objects) begin(key types.NamespacedName, obj client.Object) {
	fp := s.fingerprint(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stateOf(key, obj.GetUID())
	st.running, st.base, st.isRunning = fp, obj.GetResourceVersion(), true
	st.news, st.due, st.notBefore = false, time.Time{}, time.Time{}
}

// rebase makes obj, as a write of the loop's own returned it before the
// reconciler runs (its finalizer added), what the running reconcile acts
// on: the reconciler gets that object, someone else's change merged into
// it included.
func (s *objects) rebase(key types.NamespacedName, obj client.Object) {
	fp := s.fingerprint(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.m[key]; st != nil && st.isRunning && st.uid == obj.GetUID() {
		st.running, st.base = fp, obj.GetResourceVersion()
	}
}

// end marks the end of the reconcile begun last: the object as it acted
// on it (own writes folded in) is what later wake-ups compare with, and
// notBefore holds until the error's own delay has passed.
func (s *objects) end(key types.NamespacedName, uid types.UID, notBefore time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.m[key]
	if st == nil || st.uid != uid || !st.isRunning {
		return
	}
	st.acted, st.hasActed, st.isRunning = st.running, true, false
	st.notBefore = notBefore
}

// wroteMeta folds a write of the running reconcile into what it acted on.
// A write made on exactly the version the reconcile read, or on the one
// its own last write returned (precondition: an Update, a patch with
// optimistic locking), returned that and our change, nothing else: result
// is what the reconcile knows. Without a precondition, the write's result
// may hold someone else's change, so only what the reconcile sent is
// folded in (sent: the fingerprint of the object as given to the write:
// its labels, annotations and the loop's finalizer); a change by anyone
// else shows up as a difference, and wakes the object. A write that sent
// its change in a raw patch, beside the object, costs one more reconcile.
func (s *objects) wroteMeta(key types.NamespacedName, sent fingerprint, precondition string, result client.Object) {
	got := s.fingerprint(result)
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.m[key]
	if st == nil || !st.isRunning || st.uid != result.GetUID() {
		return
	}
	if precondition == "" || precondition != st.base {
		st.running.labels, st.running.annotations, st.running.finalizer = sent.labels, sent.annotations, sent.finalizer
		return
	}
	st.base = result.GetResourceVersion()
	rv := st.running.rv
	st.running = got
	if rv == "" {
		st.running.rv = ""
	}
}

// setFinalizer records that the running reconcile added (or removed) the
// loop's finalizer.
func (s *objects) setFinalizer(key types.NamespacedName, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.m[key]; st != nil && st.isRunning {
		st.running.finalizer = on
	}
}

// markNews records that something the fingerprint cannot show changed
// for key.
func (s *objects) markNews(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stateOf(key, "").news = true
}

// schedule records that a reconcile of key was asked for at t. The
// earliest asked for that is still ahead is kept: the queue keeps the
// earliest too.
func (s *objects) schedule(key types.NamespacedName, t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stateOf(key, "")
	if st.lookAgain {
		st.lookAgain = false
		return
	}
	if st.due.IsZero() || t.Before(st.due) || time.Now().After(st.due) {
		st.due = t
	}
}

// deferred records that a wake-up of key that has something to run was
// put off for a lagging cache: the requeue that follows is a look again,
// which makes nothing due (the news or change is still there then).
func (s *objects) deferred(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.m[key]; st != nil {
		st.lookAgain = true
	}
}

// resync makes key due at now, unless a reconcile is already asked for: the
// informer's periodic resync runs the reconciler like a requeue, and cuts
// no delay short.
func (s *objects) resync(key types.NamespacedName, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.stateOf(key, ""); st.due.IsZero() {
		st.due = now
	}
}

// countFailure counts failures in a row of key and returns the
// optimistic-lock conflicts in a row and the failures in a row, this one
// included (0, 0 when conflict is false and failed is false: a success
// resets both).
func (s *objects) countFailure(key types.NamespacedName, failed, conflict bool) (conflicts, failures int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.m[key]
	if st == nil {
		if !failed {
			return 0, 0
		}
		st = s.stateOf(key, "")
	}
	if !failed {
		st.failures, st.conflicts = 0, 0
		return 0, 0
	}
	st.failures++
	if conflict {
		st.conflicts++
	} else {
		st.conflicts = 0
	}
	return st.conflicts, st.failures
}

// forget drops everything kept of key (the object is gone).
func (s *objects) forget(key types.NamespacedName) {
	s.mu.Lock()
	delete(s.m, key)
	s.mu.Unlock()
}

// size is the number of objects kept (for tests).
func (s *objects) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

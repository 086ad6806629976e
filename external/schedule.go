package external

import (
	"hash/fnv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// nextSlot is the time of obj's next periodic check after now. Each
// object has its own offset within the period, from its UID, so that the
// checks of many objects are spread evenly over the period whatever
// their creation times, and stay spread after a restart (a random jitter
// drawn at each check would clump again by chance). A slot less than a
// quarter period away is skipped: a check that just happened, out of
// turn, does not cost a second one right after.
func nextSlot(now time.Time, uid types.UID, period time.Duration) time.Time {
	p := int64(period)
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	phase := int64(h.Sum64() % uint64(p))
	n := now.UnixNano()
	since := (n - phase) % p
	if since < 0 {
		since += p
	}
	t := n - since + p
	if t-n < p/4 {
		t += p
	}
	return time.Unix(0, t)
}

// soon is the delay before looking again at a resource that is not ready
// yet, or not gone yet after its deletion: a twentieth of the period,
// between one and thirty seconds.
func soon(period time.Duration) time.Duration {
	return min(max(period/20, time.Second), 30*time.Second)
}

// memo is what the Reconciler remembers of one object between reconciles.
// It is only an optimisation and a safety net for the current process:
// everything a restart needs is on the object.
type memo struct {
	// next is when the resource is to be checked again; zero: unknown.
	next time.Time
	// id is the ID next was scheduled for: another ID on the object (a
	// person adopting a resource) is checked at once.
	id string
	// created is the ID of a resource this process created for the object
	// and has not recorded on it yet (the recording failed): a later
	// reconcile records it instead of asking a Finder or a person.
	created string
	// createdAt is when this process last created the object's resource:
	// right after, a system that is eventually consistent may not show it
	// yet, which is no reason to create it again.
	createdAt time.Time
	// holdUntil is the end of a Retry-After the system gave this object:
	// no call for it before then, deletion included.
	holdUntil time.Time
	// running is the operation of a call past its deadline that has not
	// returned yet: no other call is made for the object until it does.
	running string
	// creds is the identity of the credentials of the last check
	// ([Credentialed]); "": unknown.
	creds string
	// deleted is the ID of the resource this process sent a DELETE for,
	// and deletedAt when: while the system still shows it, no second
	// DELETE is sent before a period has passed.
	deleted   string
	deletedAt time.Time
}

// memos holds the memos of the objects of one Reconciler. The reconcile
// loop never reconciles one object twice at once, so a memo is read and
// written by one reconcile at a time; the map needs its lock only against
// other objects' reconciles.
type memos struct {
	mu sync.Mutex
	m  map[types.UID]memo
}

func (s *memos) get(uid types.UID) memo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[uid]
}

func (s *memos) update(uid types.UID, f func(*memo)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[types.UID]memo{}
	}
	m := s.m[uid]
	f(&m)
	s.m[uid] = m
}

// done records that the call past its deadline of the object with uid
// has returned, if the object is still remembered.
func (s *memos) done(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.m[uid]; ok {
		m.running = ""
		s.m[uid] = m
	}
}

func (s *memos) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, uid)
}

package external_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/observability"
)

// A system that deletes asynchronously (the DELETE accepted, the resource
// "deleting" for 2 s, then 404): exactly one DELETE per object, and each
// object goes once the system answers 404. Before: a DELETE on every pass
// while the system was deleting.
func TestAsyncDeleteOneDeletePerObject(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	s.deleteFor = 2 * time.Second
	// The default period (5 minutes): a deletion of seconds is looked at
	// again every second or so, not every 15 s (a twentieth of it).
	start(t, "ext-async-delete", ns, external.New(connectTo(finder{s})), &observability.FakeRecorder{})
	ws := newWidgets(t, ns, 5, nil)
	allReady(t, ws, 30*time.Second)
	deleteAndWait(t, ws...)
	gone := time.Now()
	for _, w := range ws {
		if got := s.callsBy("delete", string(w.UID)); got != 1 {
			t.Errorf("%s: %d DELETEs, want 1", w.Name, got)
		}
		s.mu.Lock()
		at, ok := s.goneAt[string(w.UID)]
		s.mu.Unlock()
		if !ok {
			t.Errorf("%s went before the system answered 404", w.Name)
			continue
		}
		t.Logf("%s: the system answered 404 from %s; every object gone %s after", w.Name, at.Format("15:04:05.000"), gone.Sub(at).Round(time.Millisecond))
		// Far above the second it takes, far below the 15 s it took.
		if after := gone.Sub(at); after > 10*time.Second {
			t.Errorf("%s: gone %s after the system's 404", w.Name, after.Round(time.Millisecond))
		}
	}
	if got := s.live(); len(got) != 0 {
		t.Errorf("left at the provider: %v", got)
	}
}

// The Orphan policy: deleting the objects calls nothing and leaves their
// resources in place.
func TestOrphanPolicyNoDelete(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	rec := &observability.FakeRecorder{}
	start(t, "ext-orphan", ns, external.New(connectTo(finder{s}), external.WithDeletionPolicy(external.Orphan)), rec)
	ws := newWidgets(t, ns, 3, nil)
	allReady(t, ws, 30*time.Second)
	before := len(s.callLog())
	deleteAndWait(t, ws...)
	if got := s.callsBy("delete", ""); got != 0 {
		t.Errorf("DELETEs: %d, want 0", got)
	}
	if got := len(s.callLog()) - before; got != 0 {
		t.Errorf("calls during the deletion: %d, want 0", got)
	}
	if got := len(s.live()); got != 3 {
		t.Errorf("resources left: %d, want 3", got)
	}
	if got := countEvents(rec, "Orphaned"); got != 3 {
		t.Errorf("Orphaned events: %d, want 3", got)
	}
}

// An object deleted while the system's Retry-After runs (its update
// answered 429, Retry-After 3 s): no call for it before the 3 s are over.
func TestDeletionHoldsRetryAfter(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	var mu sync.Mutex
	var limited time.Time
	s.before = func(op, _ string) error {
		mu.Lock()
		defer mu.Unlock()
		if op == "update" && limited.IsZero() {
			limited = time.Now()
			return answer(http.StatusTooManyRequests, "3")
		}
		return nil
	}
	start(t, "ext-delete-hold", ns, external.New(connectTo(finder{s})), &observability.FakeRecorder{})
	ws := newWidgets(t, ns, 1, nil)
	allReady(t, ws, 30*time.Second)
	w := get(t, ws[0])
	w.Spec.Size = 2
	if err := cluster.Client().Update(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the update answered 429", func() error {
		mu.Lock()
		defer mu.Unlock()
		if limited.IsZero() {
			return fmt.Errorf("no update yet")
		}
		return nil
	})
	deleteAndWait(t, ws[0])
	mu.Lock()
	defer mu.Unlock()
	early := 0
	for _, c := range s.callLog() {
		if c.at.After(limited) && c.at.Before(limited.Add(3*time.Second)) {
			early++
			t.Logf("%s %s after the 429", c.op, c.at.Sub(limited).Round(time.Millisecond))
		}
	}
	if early != 0 {
		t.Errorf("calls within the 429's Retry-After of 3 s: %d, want 0", early)
	}
	if s.has(string(ws[0].UID)) {
		t.Error("the resource was not deleted")
	}
}

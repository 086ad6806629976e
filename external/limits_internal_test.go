package external

import (
	"testing"
	"time"
)

// The rate limit's bucket: a burst of calls goes at once, the rest each
// wait their turn at the rate, and an idle system refills up to the burst
// only.
func TestReserveSpacesCalls(t *testing.T) {
	st := &systemState{}
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var waits []time.Duration
	for range 8 {
		waits = append(waits, st.reserve(now, 10, 5))
	}
	want := []time.Duration{0, 0, 0, 0, 0, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond}
	for i := range want {
		if d := waits[i] - want[i]; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("call %d waits %s, want %s", i, waits[i], want[i])
		}
	}
	later := now.Add(time.Hour)
	n := 0
	for st.reserve(later, 10, 5) == 0 {
		n++
	}
	if n != 5 {
		t.Errorf("calls at once after an idle hour: %d, want the burst, 5", n)
	}
}

// A Retry-After holds every call to the system until it ends, and a
// shorter one does not cut it short.
func TestSystemHold(t *testing.T) {
	st := &systemState{}
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	st.hold(now.Add(30*time.Second), "a create of Widget default/a")
	st.hold(now.Add(5*time.Second), "an observe of Widget default/b")
	if err := st.held("dns", "observe", now.Add(29*time.Second)); err == nil {
		t.Error("a call 29 s into a 30 s Retry-After is not held")
	}
	if err := st.held("dns", "observe", now.Add(30*time.Second)); err != nil {
		t.Errorf("a call at the end of the Retry-After is held: %v", err)
	}
}

// The hard cap: at most limit starts in any second, whatever the bucket
// let through.
func TestAdmitCapsASecond(t *testing.T) {
	st := &systemState{}
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for i := range 3 {
		if d := st.admit(now.Add(time.Duration(i)*time.Millisecond), 3); d != 0 {
			t.Fatalf("start %d waits %s, want 0", i, d)
		}
	}
	if d := st.admit(now.Add(500*time.Millisecond), 3); d != 500*time.Millisecond {
		t.Errorf("a fourth start in the same second waits %s, want 500ms", d)
	}
	if d := st.admit(now.Add(time.Second), 3); d != 0 {
		t.Errorf("a start one second after the first waits %s, want 0", d)
	}
}

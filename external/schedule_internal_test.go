package external

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopgo/kopgo/test/widget"
)

// uids returns n UIDs in the API server's form, the same on every run.
func uids(n int) []types.UID {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]types.UID, n)
	for i := range out {
		out[i] = types.UID(fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.Uint32()&0xffff,
			rng.Uint32()&0xfff, rng.Uint32()&0xfff, rng.Uint64()&0xffffffffffff))
	}
	return out
}

// 500 objects created in the same second, with a 1-minute period: their
// checks are spread over the minute (the peak second holds a few, not
// 500), each within a quarter to one and a quarter periods, and a check
// at its slot schedules the next exactly one period later.
func TestNextSlotSpreadsChecks(t *testing.T) {
	const period = time.Minute
	now := time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
	perSecond := map[int64]int{}
	for _, uid := range uids(500) {
		next := nextSlot(now, uid, period)
		if d := next.Sub(now); d < period/4 || d > period*5/4 {
			t.Fatalf("%s: next check in %s, want within [%s, %s]", uid, d, period/4, period*5/4)
		}
		if again := nextSlot(next, uid, period); again.Sub(next) != period {
			t.Fatalf("%s: checked at its slot, next in %s, want %s", uid, again.Sub(next), period)
		}
		perSecond[next.Unix()%60]++
	}
	peak := 0
	for _, n := range perSecond {
		peak = max(peak, n)
	}
	// 500 over 60 seconds is 8.3 a second; a hash spreads them like a
	// uniform draw, whose peak second over 60 holds about twice that.
	if peak > 20 || len(perSecond) < 55 {
		t.Errorf("checks in the peak second: %d over %d distinct seconds; want at most 20 over at least 55", peak, len(perSecond))
	}
	t.Logf("500 objects, 1-minute period: peak %d checks in one second, %d of 60 seconds used", peak, len(perSecond))
}

func TestSoon(t *testing.T) {
	for _, c := range []struct{ period, want time.Duration }{
		{time.Second, time.Second},
		{time.Minute, 3 * time.Second},
		{5 * time.Minute, 15 * time.Second},
		{time.Hour, 30 * time.Second},
	} {
		if got := soon(c.period); got != c.want {
			t.Errorf("soon(%s) = %s, want %s", c.period, got, c.want)
		}
	}
}

// A resource being deleted is looked at again after a tenth of the time
// the deletion has taken, between a second and soon's look again: a
// deletion of seconds is seen done within a second of the system's 404.
func TestDeletionPoll(t *testing.T) {
	now := time.Now()
	obj := &widget.Widget{}
	for _, tc := range []struct {
		since, period, want time.Duration
	}{
		{3 * time.Second, 5 * time.Minute, time.Second},
		{30 * time.Second, 5 * time.Minute, 3 * time.Second},
		{10 * time.Minute, 5 * time.Minute, 15 * time.Second},
		{10 * time.Minute, time.Hour, 30 * time.Second},
		{2 * time.Minute, 10 * time.Second, time.Second},
	} {
		obj.DeletionTimestamp = &metav1.Time{Time: now.Add(-tc.since)}
		if got := deletionPoll(obj, tc.period, now); got != tc.want {
			t.Errorf("deleting for %s, period %s: look again after %s, want %s", tc.since, tc.period, got, tc.want)
		}
	}
}

package observability

import (
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"

	"github.com/kopgo/kopgo/internal/recency"
)

// seriesOf returns a series whose event carries key, as Event makes it.
func seriesOf(key seriesKey, last time.Time) *series {
	ev := &eventsv1.Event{Type: key.eventType, Reason: key.reason, Action: key.action, Note: key.note, Regarding: key.regarding}
	if key.related != (corev1.ObjectReference{}) {
		ev.Related = &key.related
	}
	return &series{last: last, event: ev}
}

// The series remembered for folding repeats are bounded: past maxSeries,
// the least recently seen one the server knows in full is forgotten
// (a repeat of it would start a new Event); a series whose count is
// still to be written is kept.
func TestRememberedSeriesAreBounded(t *testing.T) {
	r := &EventRecorder{series: map[seriesKey]*series{}, pending: map[*series]struct{}{}}
	t0 := time.Now()
	key := func(i int) seriesKey { return seriesKey{reason: "Step", note: "step " + strconv.Itoa(i)} }
	for i := range maxSeries {
		s := seriesOf(key(i), t0.Add(time.Duration(i)*time.Millisecond))
		if i == 0 {
			r.pending[s] = struct{}{} // the oldest, but its count is not written yet
		}
		r.rememberLocked(key(i), s, t0)
	}
	for i := maxSeries; i < maxSeries+10; i++ {
		r.rememberLocked(key(i), seriesOf(key(i), t0.Add(time.Duration(i)*time.Millisecond)), t0)
	}
	if n := len(r.series); n != maxSeries {
		t.Errorf("%d series remembered, want %d", n, maxSeries)
	}
	for i, want := range map[int]bool{0: true, 1: false, 10: false, 11: true, maxSeries + 9: true} {
		if _, ok := r.series[key(i)]; ok != want {
			t.Errorf("series %d remembered: %v, want %v", i, ok, want)
		}
	}
}

// Series whose last occurrence is older than seriesExpiry are forgotten,
// unless their count is still to be written; a repeat makes a series the
// newest, so an old series that repeated stays. The walk starts at the
// oldest and stops at the first open series.
func TestForgetEndedSeries(t *testing.T) {
	r := &EventRecorder{series: map[seriesKey]*series{}, pending: map[*series]struct{}{}}
	t0 := time.Now()
	key := func(i int) seriesKey { return seriesKey{reason: "Step", note: "step " + strconv.Itoa(i)} }
	all := make([]*series, 5)
	for i := range all {
		all[i] = seriesOf(key(i), t0.Add(time.Duration(i)*time.Millisecond))
		r.rememberLocked(key(i), all[i], t0)
	}
	all[0].last = t0.Add(time.Hour) // repeated much later
	r.order.Touch(all[0])
	r.pending[all[1]] = struct{}{}
	r.forgetLocked(t0.Add(seriesExpiry + 3*time.Millisecond))
	for i, want := range []bool{true, true, false, true, true} {
		if _, ok := r.series[key(i)]; ok != want {
			t.Errorf("series %d remembered: %v, want %v", i, ok, want)
		}
	}
	var order []string
	for s := r.order.Oldest(); s != nil; s = recency.Newer(s) {
		order = append(order, s.key().note)
	}
	if want := "step 1,step 3,step 4,step 0"; strings.Join(order, ",") != want {
		t.Errorf("order from the oldest: %v, want %v", order, want)
	}
}

// A new series when maxSeries are remembered: the least recently seen one
// is evicted. Measures the eviction's cost at capacity (one per event of a
// new parent in a large operator).
func BenchmarkRememberAtCapacity(b *testing.B) {
	r := &EventRecorder{series: map[seriesKey]*series{}, pending: map[*series]struct{}{}}
	t0 := time.Now()
	key := func(i int) seriesKey { return seriesKey{reason: "Step", note: "step " + strconv.Itoa(i)} }
	for i := range maxSeries {
		r.rememberLocked(key(i), seriesOf(key(i), t0), t0)
	}
	news := make([]*series, 1024)
	for i := range news {
		news[i] = seriesOf(key(maxSeries+i), t0)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s := news[i%len(news)]
		r.rememberLocked(s.key(), s, t0)
		i++
	}
}

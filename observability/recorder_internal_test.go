package observability

import (
	"strconv"
	"testing"
	"time"
)

// The series remembered for folding repeats are bounded: past maxSeries,
// the least recently seen one the server knows in full is forgotten
// (a repeat of it would start a new Event); a series whose count is
// still to be written is kept.
func TestRememberedSeriesAreBounded(t *testing.T) {
	r := &EventRecorder{series: map[seriesKey]*series{}, pending: map[*series]struct{}{}}
	t0 := time.Now()
	key := func(i int) seriesKey { return seriesKey{reason: "Step", note: "step " + strconv.Itoa(i)} }
	for i := range maxSeries {
		s := &series{last: t0.Add(time.Duration(i) * time.Millisecond)}
		if i == 0 {
			r.pending[s] = struct{}{} // the oldest, but its count is not written yet
		}
		r.rememberLocked(key(i), s, t0)
	}
	for i := maxSeries; i < maxSeries+10; i++ {
		r.rememberLocked(key(i), &series{last: t0.Add(time.Duration(i) * time.Millisecond)}, t0)
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

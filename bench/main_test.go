package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBenchRuns runs the whole program on a tiny workload, so that make
// test keeps it working. It asserts what must hold on any machine (every
// figure was measured, the client's and the API server's write counts
// agree, the raw floor sends exactly its four writes per parent, each Go
// benchmark's op is what its table says), never a duration.
func TestBenchRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own control plane")
	}
	if err := flag.Set("test.benchtime", "5ms"); err != nil {
		t.Fatal(err)
	}
	const n = 3
	o := options{scale: []scalePoint{{n: n, rounds: 1}, {n: 2 * n, rounds: 1}}, changes: 2, writes: 1, heapRepeats: 2,
		benchtime: 5 * time.Millisecond, out: filepath.Join(t.TempDir(), "RESULTS.md")}
	o.chart = filepath.Join(filepath.Dir(o.out), "scale.png")
	res, err := measureAll(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.points) != 2 {
		t.Fatalf("%d points of the scale, want 2", len(res.points))
	}
	png, err := os.ReadFile(o.chart)
	if err != nil {
		t.Fatalf("no chart: %v", err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("the chart %s is not a PNG", o.chart)
	}
	if !strings.Contains(res.table, "](scale.png)") {
		t.Errorf("the table does not show the chart")
	}
	for _, v := range variants() {
		ss := res.points[0].samples[v.key]
		if len(ss) != 1 {
			t.Fatalf("%s: %d samples, want 1", v.key, len(ss))
		}
		s := ss[0]
		if s.converge.writes != s.convergeServer {
			t.Errorf("%s converge: client counted %d writes, API server %d", v.key, s.converge.writes, s.convergeServer)
		}
		if len(s.latency.total) != o.changes {
			t.Errorf("%s: %d change latencies, want %d", v.key, len(s.latency.total), o.changes)
		}
		if v.key >= "D" && !strings.Contains(res.table, "| no-op resync after a restart: 0 writes (issue 14, kept) | "+v.key+" |") {
			t.Errorf("table has no target rows for %s", v.key)
		}
		if !strings.Contains(res.table, "| "+v.key+" "+v.name+" |") {
			t.Errorf("table has no row for %s", v.key)
		}
		if v.setup == nil {
			if want := int64(4 * n); s.converge.writes != want {
				t.Errorf("raw floor: %d writes, want %d (3 applies and 1 status update per parent)", s.converge.writes, want)
			}
			continue
		}
		if len(s.latency.traces) != o.changes {
			t.Errorf("%s: %d change traces, want %d", v.key, len(s.latency.traces), o.changes)
		}
		for _, tr := range s.latency.traces {
			if tr.start <= 0 || tr.work <= 0 || tr.seen < tr.start {
				t.Errorf("%s: change trace %+v: a reconcile began after the write and children were seen after it began", v.key, tr)
			}
		}
		if len(s.ownWrites) != o.writes {
			t.Fatalf("%s: %d own-write changes, want %d", v.key, len(s.ownWrites), o.writes)
		}
		if ow := s.ownWrites[0]; ow.reconciles < 1 || ow.first.writes < 3 {
			t.Errorf("%s: a change caused %d reconciles, the first writing %d times; want at least one, writing the three children", v.key, ow.reconciles, ow.first.writes)
		}
		if s.resync.writes != s.resyncServer {
			t.Errorf("%s resync: client counted %d writes, API server %d", v.key, s.resync.writes, s.resyncServer)
		}
		if len(s.heap.perParent) != o.heapRepeats {
			t.Errorf("%s: %d heap readings, want %d", v.key, len(s.heap.perParent), o.heapRepeats)
		}
		for kind, got := range s.heap.cache.objects {
			if got != n {
				t.Errorf("%s: the cache held %d %ss, want %d", v.key, got, kind, n)
			}
		}
		if len(s.heap.cache.objects) != 4 {
			t.Errorf("%s: the cache check counted %v, want the four kinds", v.key, s.heap.cache.objects)
		}
		gb, ok := res.points[0].benches[v.key]
		if !ok {
			t.Errorf("%s: no Go benchmark", v.key)
		}
		wake, hasWake := res.points[0].wakes[v.key]
		if hasWake != v.isKopgo() {
			t.Errorf("%s: Go benchmark of a wake-up with nothing new: %t, want %t (kopgo's variants only)", v.key, hasWake, v.isKopgo())
		}
		if !v.isKopgo() {
			continue
		}
		// Each op is what the tables say it is: the converged reconcile
		// runs the user's code, the wake-up with nothing new runs none.
		if ok && gb.skippedPerOp != 0 {
			t.Errorf("%s: converged reconcile: %.2f wake-ups skipped per op, want 0 (each op runs the user's code)", v.key, gb.skippedPerOp)
		}
		if hasWake && wake.skippedPerOp != 1 {
			t.Errorf("%s: wake-up with nothing new: %.2f skipped per op, want 1", v.key, wake.skippedPerOp)
		}
		if !strings.Contains(res.table, "| reconciles that run the reconciler's code per change: 1 (issue 34) | "+v.key+" |") {
			t.Errorf("table has no reconciles-per-change target row for %s", v.key)
		}
	}
}

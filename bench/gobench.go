package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kopgo/kopgo/test/widget"
)

// benchOp is what one op of a Go benchmark is.
type benchOp int

const (
	// opConverged is one reconcile of a converged parent that runs the
	// reconciler's code: for kopgo's loop, the request is marked as news
	// first (Loop.MarkNews, as a child's or a watched object's event
	// would), so that the wake-up is not judged to have nothing new.
	opConverged benchOp = iota
	// opNothingNew is a wake-up with nothing new: the loop's Reconcile on
	// a parent it has already reconciled, with no change, news or requeue
	// since (kopgo's variants only). It runs none of the reconciler's
	// code.
	opNothingNew
)

func (op benchOp) String() string {
	if op == opNothingNew {
		return "nothing-new"
	}
	return "converged"
}

// newsMarker is kopgo's loop (loop.Loop.MarkNews): it makes the next
// wake-up of req run the reconciler.
type newsMarker interface {
	MarkNews(req reconcile.Request)
}

// goBenchmark runs testing.Benchmark over one op of v's reconciler (see
// benchOp) for a converged parent, on m's cache and counted client.
func (e *env) goBenchmark(ctx context.Context, m *running, v variant, n, round int, p *widget.Widget, op benchOp) (goBench, error) {
	r, err := v.bench(m.mgr)
	if err != nil {
		return goBench{}, err
	}
	marker, isLoop := r.(newsMarker)
	if v.isKopgo() != isLoop {
		// A kopgo variant whose reconciler is not the loop would time
		// something else than the table says.
		return goBench{}, fmt.Errorf("go benchmark: %s's reconciler %T: kopgo variant %t, has MarkNews %t", v.key, r, v.isKopgo(), isLoop)
	}
	if op == opNothingNew && !isLoop {
		return goBench{}, fmt.Errorf("go benchmark: a wake-up with nothing new is kopgo's loop's only, not %s's", v.key)
	}
	markNews := op == opConverged && isLoop
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}}
	skippedName := gobenchName(v.fieldOwner)
	prof, err := startProfile()
	if err != nil {
		return goBench{}, err
	}
	var ferr error
	var counts trafficCount
	var skipped float64
	res := testing.Benchmark(func(b *testing.B) {
		b.Helper()
		// The first reconcile fills what the reconciler remembers (kopgo's
		// Applier records, and what the loop acted on: after it, a
		// wake-up with nothing new runs nothing); it is not counted.
		if _, err := r.Reconcile(ctx, req); err != nil {
			ferr = err
			b.SkipNow()
		}
		before := m.traffic.snapshot()
		skipped0 := 0.0
		if isLoop {
			skipped0 = skips(skippedName)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if markNews {
				marker.MarkNews(req)
			}
			if _, err := r.Reconcile(ctx, req); err != nil {
				ferr = err
				b.SkipNow()
			}
		}
		b.StopTimer()
		counts = m.traffic.snapshot().sub(before)
		if isLoop {
			skipped = skips(skippedName) - skipped0
		}
		b.ReportMetric(float64(counts.requests)/float64(b.N), "requests/op")
		b.ReportMetric(float64(counts.writes)/float64(b.N), "writes/op")
		b.ReportMetric(skipped/float64(b.N), "skipped/op")
	})
	prof.stop()
	if ferr != nil {
		return goBench{}, fmt.Errorf("go benchmark (%s): %w", op, ferr)
	}
	if res.N == 0 {
		return goBench{}, fmt.Errorf("go benchmark (%s) did not run", op)
	}
	gb := goBench{
		nsPerOp: float64(res.NsPerOp()), allocsPerOp: float64(res.AllocsPerOp()), bytesPerOp: float64(res.AllocedBytesPerOp()),
		requestsPerOp: res.Extra["requests/op"], writesPerOp: res.Extra["writes/op"],
		skippedPerOp: res.Extra["skipped/op"], loop: isLoop,
	}
	if e.o.profile != "" && round == 0 {
		key := fmt.Sprintf("%s-%d", v.key, n)
		if op == opNothingNew {
			key += ".nothing-new"
		}
		if err := prof.write(e.o.profile, key); err != nil {
			return goBench{}, err
		}
	}
	if gb.cpuTop, err = topOf(prof.cpu.Bytes(), nil, "cpu", 5); err != nil {
		return goBench{}, fmt.Errorf("cpu profile: %w", err)
	}
	if gb.allocTop, err = topOf(prof.allocs.Bytes(), prof.allocsBase.Bytes(), "alloc_objects", 5); err != nil {
		return goBench{}, fmt.Errorf("allocation profile: %w", err)
	}
	return gb, nil
}

// profiles are the CPU and allocation profiles of one Go benchmark, in
// memory.
type profiles struct {
	cpu, allocsBase, allocs bytes.Buffer
}

// startProfile starts a CPU profile and takes the allocation profile so
// far (the later one's base: it counts from the program's start).
func startProfile() (*profiles, error) {
	p := &profiles{}
	if err := writeAllocs(&p.allocsBase); err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(&p.cpu); err != nil {
		return nil, err
	}
	return p, nil
}

// stop stops the CPU profile and takes the allocation profile.
func (p *profiles) stop() {
	pprof.StopCPUProfile()
	if err := writeAllocs(&p.allocs); err != nil {
		logf("profile: %v", err)
	}
}

// write writes the profiles into dir, named after key:
// <key>.cpu.pprof, <key>.allocs.pprof and its base <key>.allocs.base.pprof
// (go tool pprof -base).
func (p *profiles) write(dir, key string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	for name, b := range map[string]*bytes.Buffer{"cpu": &p.cpu, "allocs.base": &p.allocsBase, "allocs": &p.allocs} {
		if err := os.WriteFile(filepath.Join(dir, key+"."+name+".pprof"), b.Bytes(), 0o644); err != nil { //nolint:gosec // profiles, meant to be read
			return err
		}
	}
	return nil
}

// writeHeapProfile writes the heap profile (as of the last GC) to
// dir/<key>.heap.pprof.
func writeHeapProfile(dir, key string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, key+".heap.pprof"))
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("heap").WriteTo(f, 0)
}

func writeAllocs(w io.Writer) error {
	runtime.GC() // the profile shows allocations up to the last GC
	return pprof.Lookup("allocs").WriteTo(w, 0)
}

// startCPUProfile starts a CPU profile written to dir/name.pprof and
// returns the function that stops it.
func startCPUProfile(dir, name string) (func(), error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, name+".pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

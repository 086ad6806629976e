package main

import (
	"bytes"
	"context"
	"errors"
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

// goBenchmark runs testing.Benchmark over one reconcile of a converged
// parent, with v's reconciler on m's cache and counted client.
func (e *env) goBenchmark(ctx context.Context, m *running, v variant, n, round int, p *widget.Widget) (goBench, error) {
	r, err := v.bench(m.mgr)
	if err != nil {
		return goBench{}, err
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}}
	prof, err := startProfile()
	if err != nil {
		return goBench{}, err
	}
	var ferr error
	var counts trafficCount
	res := testing.Benchmark(func(b *testing.B) {
		b.Helper()
		// The first reconcile fills what the reconciler remembers (kopgo's
		// Applier records); it is not counted.
		if _, err := r.Reconcile(ctx, req); err != nil {
			ferr = err
			b.SkipNow()
		}
		before := m.traffic.snapshot()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := r.Reconcile(ctx, req); err != nil {
				ferr = err
				b.SkipNow()
			}
		}
		b.StopTimer()
		counts = m.traffic.snapshot().sub(before)
		b.ReportMetric(float64(counts.requests)/float64(b.N), "requests/op")
		b.ReportMetric(float64(counts.writes)/float64(b.N), "writes/op")
	})
	prof.stop()
	if ferr != nil {
		return goBench{}, fmt.Errorf("go benchmark: %w", ferr)
	}
	if res.N == 0 {
		return goBench{}, errors.New("go benchmark did not run")
	}
	gb := goBench{
		nsPerOp: float64(res.NsPerOp()), allocsPerOp: float64(res.AllocsPerOp()), bytesPerOp: float64(res.AllocedBytesPerOp()),
		requestsPerOp: res.Extra["requests/op"], writesPerOp: res.Extra["writes/op"],
	}
	if e.o.profile != "" && round == 0 {
		if err := prof.write(e.o.profile, fmt.Sprintf("%s-%d", v.key, n)); err != nil {
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

package main

import (
	"context"
	"errors"
	"fmt"
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
func (e *env) goBenchmark(ctx context.Context, m *running, v variant, n int, p *widget.Widget) (goBench, error) {
	r, err := v.bench(m.mgr)
	if err != nil {
		return goBench{}, err
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}}
	if e.o.profile != "" {
		stop, err := startProfile(e.o.profile, fmt.Sprintf("%s-%d", v.key, n))
		if err != nil {
			return goBench{}, err
		}
		defer stop()
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
	if ferr != nil {
		return goBench{}, fmt.Errorf("go benchmark: %w", ferr)
	}
	if res.N == 0 {
		return goBench{}, errors.New("go benchmark did not run")
	}
	return goBench{
		nsPerOp: float64(res.NsPerOp()), allocsPerOp: float64(res.AllocsPerOp()), bytesPerOp: float64(res.AllocedBytesPerOp()),
		requestsPerOp: res.Extra["requests/op"], writesPerOp: res.Extra["writes/op"],
	}, nil
}

// startProfile starts a CPU profile and returns a function that stops it
// and writes the allocation profile, both into dir named after the variant.
// The allocation profile counts from the program's start: the one written
// before (<variant>.allocs.base.pprof) is its -base for go tool pprof.
func startProfile(dir, key string) (func(), error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	writeAllocs(filepath.Join(dir, key+".allocs.base.pprof"))
	cpu, err := os.Create(filepath.Join(dir, key+".cpu.pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		_ = cpu.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = cpu.Close()
		writeAllocs(filepath.Join(dir, key+".allocs.pprof"))
	}, nil
}

func writeAllocs(path string) {
	runtime.GC()              // the profile shows allocations up to the last GC
	f, err := os.Create(path) //nolint:gosec // a path from the command line
	if err != nil {
		logf("profile: %v", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		logf("profile: %v", err)
	}
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

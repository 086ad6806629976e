package main

import (
	"fmt"
	"slices"
	"time"
)

// targets renders issue 20's targets for kopgo's variants (D and E)
// against the baselines of the same run, from the medians above: met or
// missed, and by how much. The scale target compares the largest N with
// the smallest; the others are at the smallest.
func targets(p func(string, ...any), points []point) {
	const floor, careful = "A", "C"
	base, top := points[0], points[len(points)-1]
	samples, benches := base.samples, base.benches
	if len(samples[careful]) == 0 {
		return
	}
	p("\n## Targets\n\n")
	p("Issue 20's targets, and issue 34's reconciles per change, from the medians above (ratios in this run; N=%d unless the row says otherwise). "+
		"A missed target is said so; why, with its profile, is in the README's Performance section.\n\n", base.n)
	p("| target | variant | figure | verdict |\n|---|---|---|---|\n")
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**missed**"
	}
	medF := func(s []sample, f func(sample) float64) float64 {
		if len(s) == 0 {
			return 0
		}
		xs := make([]float64, 0, len(s))
		for _, x := range s {
			xs = append(xs, f(x))
		}
		slices.Sort(xs)
		return median(xs)
	}
	wall := func(x sample) float64 { return float64(x.convergeWall) }
	heap := func(key string) float64 {
		all := heapReadings(samples[key])
		if len(all) == 0 {
			return 0
		}
		return median(all)
	}
	limits := map[string]struct{ cpu, heap float64 }{"D": {1.1, 1.0}, "E": {1.5, 1.2}}
	for _, key := range []string{"D", "E"} {
		if len(samples[key]) == 0 {
			continue
		}
		lim := limits[key]
		if gb, gc := benches[key], benches[careful]; gb.nsPerOp > 0 && gc.nsPerOp > 0 {
			cpu, allocs := gb.nsPerOp/gc.nsPerOp, gb.allocsPerOp/gc.allocsPerOp
			p("| converged reconcile at most %.1f× C (CPU, allocations) | %s | %.2f× CPU, %.2f× allocs | %s |\n",
				lim.cpu, key, cpu, allocs, verdict(cpu <= lim.cpu && allocs <= lim.cpu))
		}
		if key == "D" {
			l, lc := pooledP99(samples[key]), pooledP99(samples[careful])
			p("| change latency p99 at most C's (every round's changes) | %s | %s vs %s (%.2f×) | %s |\n", key,
				fmtDur(l), fmtDur(lc), float64(l)/float64(lc), verdict(l <= lc))
		}
		h, hc := heap(key), heap(careful)
		p("| heap per parent at most %s | %s | %.1f vs %.1f KiB (%.2f× C) | %s |\n", limitC(lim.heap), key, h/1024, hc/1024, h/hc, verdict(h <= lim.heap*hc))
		if key == "E" && len(samples[floor]) > 0 {
			w, wa := medF(samples[key], wall), medF(samples[floor], wall)
			p("| converge within 1.3× the floor | %s | %.2f× | %s |\n", key, w/wa, verdict(w <= 1.3*wa))
		}
		if top.n != base.n && len(top.samples[key]) > 0 {
			per := func(pt point, f func(sample) float64) float64 { return medF(pt.samples[key], f) / float64(pt.n) }
			wr := per(top, wall) / per(base, wall)
			req := func(x sample) float64 { return float64(x.converge.requests) }
			rr := per(top, req) / per(base, req)
			p("| per-parent converge cost at N=%d within 1.2× of N=%d | %s | wall %.2f×, requests %.2f× | %s |\n",
				top.n, base.n, key, wr, rr, verdict(wr <= 1.2 && rr <= 1.2))
		}
		if ows := pooledOwnWrites(samples[key]); len(ows) > 0 {
			rs := make([]int, len(ows))
			for i, o := range ows {
				rs[i] = o.reconciles
			}
			slices.Sort(rs)
			m := median(rs)
			p("| reconciles that run the reconciler's code per change: 1 (issue 34) | %s | %d (%d–%d) over %d changes | %s |\n",
				key, m, rs[0], rs[len(rs)-1], len(rs), verdict(m == 1))
		}
		writes := medF(samples[key], func(x sample) float64 { return float64(x.resync.writes) })
		p("| no-op resync after a restart: 0 writes (issue 14, kept) | %s | %.0f writes | %s |\n", key, writes, verdict(writes == 0))
	}
}

// limitC names a multiple of C's figure.
func limitC(x float64) string {
	if x == 1 {
		return "C's"
	}
	return fmt.Sprintf("%.1f× C", x)
}

// pooledOwnWrites are every round's own-write changes together.
func pooledOwnWrites(s []sample) []ownWrite {
	var all []ownWrite
	for _, x := range s {
		all = append(all, x.ownWrites...)
	}
	return all
}

// pooledP99 is the p99 of every round's change latencies together.
func pooledP99(s []sample) time.Duration {
	var all []time.Duration
	for _, x := range s {
		all = append(all, x.latency.total...)
	}
	return quantile(all, 0.99)
}

package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// report renders the results as markdown: every figure at the scale's
// first N, the per-parent figures at each N, and the targets.
func report(vs []variant, points []point, o options, load0, load1 string, took time.Duration) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	base := points[0]
	p("# kopgo benchmark results\n\n")
	p("Produced by `make bench` (`go run .` in bench/); what each figure means and how it is measured: [bench/README.md](README.md).\n\n")
	p("Scale: N = %s parents per variant (rounds at each N: %s), 3 children each (ConfigMap, Secret, Service), %d workers, no client-side rate limit; "+
		"variants interleaved in each round. Each cell: **median** (min) over rounds. The sections below the machine are at N=%d; "+
		"[Scale](#scale) has the per-parent figures at each N.\n\n", joinN(points, func(p point) string { return fmt.Sprint(p.n) }),
		joinN(points, func(p point) string { return fmt.Sprint(p.rounds) }), workers, base.n)
	p("| machine | |\n|---|---|\n")
	p("| date | %s |\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	p("| CPU | %s |\n", cpuModel())
	p("| cores (nproc) | %d |\n", runtime.NumCPU())
	p("| load average before / after | %s / %s |\n", load0, load1)
	p("| Go | %s %s/%s |\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	p("| run time | %s |\n\n", took.Round(time.Second))

	name := func(v variant) string { return v.key + " " + v.name }
	samples, benches := base.samples, base.benches

	p("## Converge from empty\n\n")
	p("From the operator's start (parents exist, no children) until a watch sees every parent Ready with all three children; " +
		"requests until the controller is idle. Writes: mutating requests, counted by the client and by the API server (apiserver_request_total). " +
		"Events: event writes (kopgo's Builder records events; the baselines record none), not among the requests. " +
		"Reconciles per parent: how many times the reconciler's code ran per new parent until idle. " +
		"Deferrals: reconciles kopgo's loop put off in the round (converge, resync, changes) because the cache still held the parent older than the controller's own last write to it.\n\n")
	p("| variant | wall | requests | writes (client) | writes (API server) | events | reconciles per parent | deferrals |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, v := range vs {
		s := samples[v.key]
		perParent, deferred := "–", "–"
		if v.setup != nil {
			perParent = floatCell(s, func(x sample) float64 { return float64(x.convergeReconciles) / float64(base.n) })
			deferred = intCell(s, func(x sample) int64 { return x.deferrals })
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", name(v),
			durCell(s, func(x sample) time.Duration { return x.convergeWall }),
			intCell(s, func(x sample) int64 { return x.converge.requests }),
			intCell(s, func(x sample) int64 { return x.converge.writes }),
			intCell(s, func(x sample) int64 { return x.convergeServer }),
			intCell(s, func(x sample) int64 { return x.converge.events }),
			perParent, deferred)
	}

	p("\n## No-op resync after an operator restart\n\n")
	p("Nothing changed; a new manager starts, until every parent was reconciled once and the controller is idle. " +
		"Requests include the informers' lists and watches. Objects changed: parents and children whose resourceVersion moved.\n\n")
	p("| variant | wall | requests | writes (client) | writes (API server) | objects changed |\n|---|---:|---:|---:|---:|---:|\n")
	for _, v := range vs {
		s := samples[v.key]
		if v.setup == nil {
			p("| %s | – | – | – | – | – |\n", name(v))
			continue
		}
		p("| %s | %s | %s | %s | %s | %s |\n", name(v),
			durCell(s, func(x sample) time.Duration { return x.resyncWall }),
			intCell(s, func(x sample) int64 { return x.resync.requests }),
			intCell(s, func(x sample) int64 { return x.resync.writes }),
			intCell(s, func(x sample) int64 { return x.resyncServer }),
			intCell(s, func(x sample) int64 { return x.resyncChanged }))
	}

	latencySection(p, vs, base, o)
	ownWritesSection(p, vs, base)
	heapSection(p, vs, base, o)

	goBenchSections(p, vs, benches, base.wakes)
	profileSection(p, vs, benches)
	scaleSection(p, vs, points, o)
	targets(p, points)
	return b.String()
}

// goBenchSections renders the Go benchmarks at one N: one reconcile of a
// converged parent, and kopgo's wake-up with nothing new beside it.
func goBenchSections(p func(string, ...any), vs []variant, benches, wakes map[string]goBench) {
	const careful = "C"
	p("\n## One reconcile of a converged parent (Go benchmark)\n\n")
	p("testing.Benchmark calling the variant's reconcile.Reconciler for one converged parent, on the running manager's cache, in every round: " +
		"the round whose ns/op is the median, with the range of ns/op over the rounds (on a shared machine one figure moved by a third from one run to the next). " +
		"One op: for B and C, one call of their Reconcile; for D and E, one call of kopgo's loop (what the Builder runs) after Loop.MarkNews, " +
		"so that the wake-up has something to look at, as a child's event would bring: the loop reads the parent, runs the user's code, which applies " +
		"the three children unchanged (0 requests), and leaves the status as it is. Without MarkNews, kopgo's loop would judge the wake-up to have " +
		"nothing new and run none of it (the next table). Skipped/op: kopgo_reconcile_skipped_total's growth per op (0: every op ran the user's code).\n\n")
	p("| variant | ns/op | allocs/op | B/op | requests/op | writes/op | skipped/op |\n|---|---:|---:|---:|---:|---:|---:|\n")
	skipped := func(gb goBench) string {
		if !gb.loop {
			return "–"
		}
		return fmt.Sprintf("%.2f", gb.skippedPerOp)
	}
	for _, v := range vs {
		gb, ok := benches[v.key]
		if !ok {
			continue
		}
		p("| %s %s | **%.0f** (%.0f–%.0f) | %.0f | %.0f | %.2f | %.2f | %s |\n", v.key, v.name, gb.nsPerOp, gb.nsMin, gb.nsMax,
			gb.allocsPerOp, gb.bytesPerOp, gb.requestsPerOp, gb.writesPerOp, skipped(gb))
	}
	if len(wakes) == 0 {
		return
	}
	p("\n### A wake-up with nothing new (Go benchmark)\n\n")
	p("The same, for kopgo's loop, on a new loop: one untimed reconcile, then each op a call of the loop with nothing new since " +
		"(no change of the parent, no news, no requeue due), what the echo of the controller's own status write or child apply brings. " +
		"The loop reads the parent from the cache, compares it with what the last reconcile acted on, and runs none of the user's code. " +
		"Beside it, C's converged reconcile from the table above: the baseline a careful hand-written reconciler pays on every such wake-up, " +
		"since it has no way to know nothing changed.\n\n")
	p("| variant | ns/op | allocs/op | B/op | requests/op | writes/op | skipped/op | vs C's converged reconcile (ns, allocs) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	gc, hasC := benches[careful]
	for _, v := range vs {
		gb, ok := wakes[v.key]
		if !ok {
			continue
		}
		vsC := "–"
		if hasC && gc.nsPerOp > 0 && gc.allocsPerOp > 0 {
			vsC = fmt.Sprintf("%.2f×, %.2f×", gb.nsPerOp/gc.nsPerOp, gb.allocsPerOp/gc.allocsPerOp)
		}
		p("| %s %s | **%.0f** (%.0f–%.0f) | %.0f | %.0f | %.2f | %.2f | %s | %s |\n", v.key, v.name, gb.nsPerOp, gb.nsMin, gb.nsMax,
			gb.allocsPerOp, gb.bytesPerOp, gb.requestsPerOp, gb.writesPerOp, skipped(gb), vsC)
	}
	if hasC {
		p("| %s %s, converged reconcile | **%.0f** (%.0f–%.0f) | %.0f | %.0f | %.2f | %.2f | – | 1.00×, 1.00× |\n", careful, "careful hand-written",
			gc.nsPerOp, gc.nsMin, gc.nsMax, gc.allocsPerOp, gc.bytesPerOp, gc.requestsPerOp, gc.writesPerOp)
	}
}

// heapSection renders the heap per parent at one N, its spread and its
// cross-check against the cache.
func heapSection(p func(string, ...any), vs []variant, pt point, o options) {
	p("\n## Heap per parent\n\n")
	p("What a manager holds: the live heap (two runtime.GC, then HeapAlloc) once a freshly started manager has synced its cache, "+
		"reconciled every converged parent and is idle, minus the live heap before it started, minus the same controller's growth on an empty namespace "+
		"(fixed: informers, clients, REST mapper, queue), divided by N. Full: the cache as each variant runs it (kopgo's D and E keep only their own "+
		"managedFields entry, apply.KeepManagedFields, as Builder.Run does; B and C keep every entry). Stripped: the cache drops managedFields "+
		"(cache.TransformStripManagedFields). Each round reads it on %d managers; the cell is the median (min–max) of all readings and the spread "+
		"is (max−min)/median.\n\n", max(o.heapRepeats, 1))
	p("| variant | full objects | spread | managedFields stripped | fixed (empty namespace) | kept after stop |\n|---|---:|---:|---:|---:|---:|\n")
	for _, v := range vs {
		s := pt.samples[v.key]
		if v.setup == nil {
			p("| %s %s | – | – | – | – | – |\n", v.key, v.name)
			continue
		}
		all := heapReadings(s)
		p("| %s %s | %s | %s | %s | %s | %s |\n", v.key, v.name, rangeKiB(all), spread(all),
			kibCell(s, func(x sample) float64 { return x.heap.stripped }),
			kibCell(s, func(x sample) float64 { return x.heap.fixed }),
			kibCell(s, func(x sample) float64 { return x.heap.retained }))
	}
	p("\nFixed is the controller's whole growth on an empty namespace (not per parent); kept after stop is the largest growth a stopped manager left behind, per parent " +
		"(near zero unless something outlives the manager).\n\n")
	p("Cross-check against the cache (first reading of the first round): the objects the manager's cache held, and what fresh copies of them take on the heap " +
		"(each object's JSON decoded into a new object, between two heap readings). The rest of the heap per parent is the informers' indexes and keys and what " +
		"the controller itself remembers (kopgo's Applier records its last apply of each child; status its last write of each parent).\n\n")
	p("| variant | objects in the cache (Widget, ConfigMap, Secret, Service) | JSON per parent | copies per parent | heap per parent | rest per parent |\n|---|---|---:|---:|---:|---:|\n")
	for _, v := range vs {
		s := pt.samples[v.key]
		if v.setup == nil || len(s) == 0 {
			continue
		}
		c := s[0].heap.cache
		h := s[0].heap.perParent[0]
		n := float64(pt.n)
		p("| %s %s | %d, %d, %d, %d | %.1f KiB | %.1f KiB | %.1f KiB | %.1f KiB |\n", v.key, v.name,
			c.objects["Widget"], c.objects["ConfigMap"], c.objects["Secret"], c.objects["Service"],
			float64(c.jsonBytes)/n/1024, float64(c.decoded)/n/1024, h/1024, (h-float64(c.decoded)/n)/1024)
	}
}

// heapReadings returns every full heap reading of the samples.
func heapReadings(s []sample) []float64 {
	var all []float64
	for _, x := range s {
		all = append(all, x.heap.perParent...)
	}
	slices.Sort(all)
	return all
}

// rangeKiB is "median (min–max)" of sorted bytes, in KiB.
func rangeKiB(sorted []float64) string {
	if len(sorted) == 0 {
		return "–"
	}
	return fmt.Sprintf("**%.1f KiB** (%.1f–%.1f)", median(sorted)/1024, sorted[0]/1024, sorted[len(sorted)-1]/1024)
}

// spread is (max-min)/median of sorted values, in per cent.
func spread(sorted []float64) string {
	if len(sorted) < 2 || median(sorted) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*(sorted[len(sorted)-1]-sorted[0])/median(sorted))
}

func joinN(points []point, f func(point) string) string {
	out := make([]string, len(points))
	for i, p := range points {
		out[i] = f(p)
	}
	return strings.Join(out, ", ")
}

// scaleSection renders the per-parent figures at each N, and links the
// chart.
func scaleSection(p func(string, ...any), vs []variant, points []point, o options) {
	if len(points) < 2 {
		return // one N: the sections above say it all
	}
	p("\n## Scale\n\n")
	p("Per-parent cost at each N (medians over that N's rounds): converge wall time, this process's CPU time (the controller, its clients and the " +
		"watch that times it; the API server and etcd are other processes) and requests divided by N, the mean time the API server took to answer a " +
		"write, heap per parent as above, one reconcile of a converged parent and, for kopgo, a wake-up with nothing new (the Go benchmarks, median over that N's rounds). The last column is the " +
		"largest N's figure over the smallest's: a cost that does not grow with N stays near 1. Wall time also grows when the API server answers more " +
		"slowly (the floor, A, shows how much); CPU per parent, requests per parent and the reconcile's time grow only with work the controller does.\n\n")
	if o.chart != "" && o.out != "" {
		if rel, err := filepath.Rel(filepath.Dir(o.out), o.chart); err == nil {
			p("![Converge time and heap per parent against N](%s)\n\n", filepath.ToSlash(rel))
		}
	}
	first, last := points[0], points[len(points)-1]
	header := func(what string) {
		cols := make([]string, len(points))
		for i, pt := range points {
			cols[i] = fmt.Sprintf("N=%d", pt.n)
		}
		p("| %s | %s | %d over %d |\n|---|%s---:|\n", what, strings.Join(cols, " | "), last.n, first.n, strings.Repeat("---:|", len(points)))
	}
	row := func(v variant, f func(point, variant) (float64, bool), format string) {
		cells := make([]string, len(points))
		for i, pt := range points {
			if x, ok := f(pt, v); ok {
				cells[i] = fmt.Sprintf(format, x)
			} else {
				cells[i] = "–"
			}
		}
		ratio := "–"
		if a, ok := f(first, v); ok && a > 0 {
			if z, ok := f(last, v); ok {
				ratio = fmt.Sprintf("%.2f×", z/a)
			}
		}
		p("| %s %s | %s | %s |\n", v.key, v.name, strings.Join(cells, " | "), ratio)
	}
	for _, fig := range scaleFigures() {
		header(fig.title)
		for _, v := range vs {
			row(v, fig.value, fig.format)
		}
		p("\n")
	}
}

// scaleFigure is one per-parent figure of the Scale section and the chart.
type scaleFigure struct {
	key, title, format string
	value              func(point, variant) (float64, bool)
}

func scaleFigures() []scaleFigure {
	med := func(pt point, key string, f func(sample) float64) (float64, bool) {
		s := pt.samples[key]
		if len(s) == 0 {
			return 0, false
		}
		xs := make([]float64, len(s))
		for i, x := range s {
			xs[i] = f(x)
		}
		slices.Sort(xs)
		return median(xs), true
	}
	return []scaleFigure{
		{key: "wall", title: "converge wall per parent (ms)", format: "%.2f", value: func(pt point, v variant) (float64, bool) {
			return med(pt, v.key, func(x sample) float64 { return float64(x.convergeWall) / float64(pt.n) / 1e6 })
		}},
		{key: "cpu", title: "converge CPU of this process per parent (ms)", format: "%.2f", value: func(pt point, v variant) (float64, bool) {
			return med(pt, v.key, func(x sample) float64 { return float64(x.convergeCPU) / float64(pt.n) / 1e6 })
		}},
		{key: "writeMean", title: "converge: mean time of a write request (ms)", format: "%.1f", value: func(pt point, v variant) (float64, bool) {
			return med(pt, v.key, func(x sample) float64 { return float64(x.convergeWriteMean) / 1e6 })
		}},
		{key: "requests", title: "converge requests per parent", format: "%.2f", value: func(pt point, v variant) (float64, bool) {
			return med(pt, v.key, func(x sample) float64 { return float64(x.converge.requests) / float64(pt.n) })
		}},
		{key: "heap", title: "heap per parent (KiB)", format: "%.1f", value: func(pt point, v variant) (float64, bool) {
			if v.setup == nil {
				return 0, false
			}
			all := heapReadings(pt.samples[v.key])
			if len(all) == 0 {
				return 0, false
			}
			return median(all) / 1024, true
		}},
		{key: "reconcile", title: "one reconcile of a converged parent (µs)", format: "%.0f", value: func(pt point, v variant) (float64, bool) {
			gb, ok := pt.benches[v.key]
			return gb.nsPerOp / 1e3, ok
		}},
		{key: "nothingNew", title: "a wake-up with nothing new (µs)", format: "%.1f", value: func(pt point, v variant) (float64, bool) {
			gb, ok := pt.wakes[v.key]
			return gb.nsPerOp / 1e3, ok
		}},
	}
}

func intCell(s []sample, f func(sample) int64) string {
	if len(s) == 0 {
		return "–"
	}
	xs := make([]int64, len(s))
	for i, x := range s {
		xs[i] = f(x)
	}
	slices.Sort(xs)
	return fmt.Sprintf("**%d** (%d)", median(xs), xs[0])
}

func floatCell(s []sample, f func(sample) float64) string {
	if len(s) == 0 {
		return "–"
	}
	xs := make([]float64, len(s))
	for i, x := range s {
		xs[i] = f(x)
	}
	slices.Sort(xs)
	return fmt.Sprintf("**%.2f** (%.2f)", median(xs), xs[0])
}

func durCell(s []sample, f func(sample) time.Duration) string {
	if len(s) == 0 {
		return "–"
	}
	xs := make([]time.Duration, len(s))
	for i, x := range s {
		xs[i] = f(x)
	}
	slices.Sort(xs)
	return fmt.Sprintf("**%s** (%s)", fmtDur(median(xs)), fmtDur(xs[0]))
}

func kibCell(s []sample, f func(sample) float64) string {
	if len(s) == 0 {
		return "–"
	}
	xs := make([]float64, len(s))
	for i, x := range s {
		xs[i] = f(x)
	}
	slices.Sort(xs)
	return fmt.Sprintf("**%.1f KiB** (%.1f)", median(xs)/1024, xs[0]/1024)
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	default:
		return d.Round(100 * time.Microsecond).String()
	}
}

// median of a sorted slice (the lower middle for an even length).
func median[T any](sorted []T) T { return sorted[(len(sorted)-1)/2] }

// quantile returns the q-quantile (nearest rank) of ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// profileSection renders the top five of each Go benchmark's CPU and
// allocation profiles.
func profileSection(p func(string, ...any), vs []variant, benches map[string]goBench) {
	p("\n## Where one converged reconcile's time and allocations go\n\n")
	p("The Go benchmark's CPU profile and allocation profile (allocated objects during the benchmark), each sample charged to the innermost " +
		"function that is not the runtime's, so that a function's share includes the allocation and garbage collection it caused; the garbage " +
		"collector's own work and the scheduler are \"runtime\". The whole process is sampled (its informers are idle). Top five, share of the total.\n\n")
	p("| variant | CPU | allocations |\n|---|---|---|\n")
	list := func(es []profileEntry) string {
		out := make([]string, len(es))
		for i, e := range es {
			out[i] = fmt.Sprintf("%.0f%% `%s`", 100*e.share, e.function)
		}
		return strings.Join(out, "<br>")
	}
	for _, v := range vs {
		gb, ok := benches[v.key]
		if !ok || v.key == "B" {
			continue
		}
		p("| %s %s | %s | %s |\n", v.key, v.name, list(gb.cpuTop), list(gb.allocTop))
	}
}

// figure returns the scale figure named key.
func figure(key string) scaleFigure {
	for _, f := range scaleFigures() {
		if f.key == key {
			return f
		}
	}
	panic("no scale figure " + key)
}

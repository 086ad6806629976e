package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// latencySection renders the change latency at one N and where its time
// goes.
func latencySection(p func(string, ...any), vs []variant, pt point, o options) {
	p("\n## Change latency\n\n")
	p("%d parents per round get a new spec.size, one after the other; from the write until a watch sees all three children carry it. "+
		"For A, the client writes the three children itself. p99 is nearest-rank over the round's changes.\n\n", min(o.changes, pt.n))
	p("| variant | p50 | p90 | p99 | p99 of every round's changes |\n|---|---:|---:|---:|---:|\n")
	for _, v := range vs {
		s := pt.samples[v.key]
		p("| %s %s | %s | %s | %s | %s |\n", v.key, v.name,
			durCell(s, func(x sample) time.Duration { return quantile(x.latency.total, 0.50) }),
			durCell(s, func(x sample) time.Duration { return quantile(x.latency.total, 0.90) }),
			durCell(s, func(x sample) time.Duration { return quantile(x.latency.total, 0.99) }), fmtDur(pooledP99(s)))
	}
	p("\nWhere the time goes (every round's changes together, p50 / p99 of each step, each from the write): the watch sees the parent's new generation; " +
		"the first reconcile of that parent begins the reconciler's code (for kopgo, the user's Reconcile, after the loop's read and status snapshot); " +
		"that code ends (the applies sent; the time the client waited for the API server's answers meanwhile is shown apart); the watch sees the three children. Loop's own time: controller-runtime's mean reconcile time less the mean " +
		"time of the reconciler's code, over the same reconciles (kopgo's status write falls in it). The slowest change is shown step by step.\n\n")
	p("| variant | parent seen | reconcile begins | its code takes | of which waiting on the API server | children seen | loop's own time per reconcile | slowest change: parent, begins, code, seen | reconciles of others running at a write |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---|---:|\n")
	for _, v := range vs {
		var trs []changeTrace
		var crT, userT time.Duration
		var crN, userN int
		for _, x := range pt.samples[v.key] {
			trs = append(trs, x.latency.traces...)
			crT, userT, crN, userN = crT+x.latency.crTime, userT+x.latency.userTime, crN+x.latency.crCount, userN+x.latency.userCount
		}
		if len(trs) == 0 {
			continue
		}
		q := func(f func(changeTrace) time.Duration) string {
			ds := make([]time.Duration, len(trs))
			for i, t := range trs {
				ds[i] = f(t)
			}
			return fmtDur(quantile(ds, 0.5)) + " / " + fmtDur(quantile(ds, 0.99))
		}
		own := "–"
		if crN > 0 && userN > 0 {
			own = fmtDur(crT/time.Duration(crN) - userT/time.Duration(userN))
		}
		slow := slices.MaxFunc(trs, func(a, b changeTrace) int { return int(a.seen - b.seen) })
		busy := slices.MaxFunc(trs, func(a, b changeTrace) int { return a.busy - b.busy }).busy
		p("| %s %s | %s | %s | %s | %s | %s | %s | %s, %s, %s, %s | %d |\n", v.key, v.name,
			q(func(t changeTrace) time.Duration { return t.parent }),
			q(func(t changeTrace) time.Duration { return t.start }),
			q(func(t changeTrace) time.Duration { return t.work }),
			q(func(t changeTrace) time.Duration { return t.waited }),
			q(func(t changeTrace) time.Duration { return t.seen }),
			own, fmtDur(slow.parent), fmtDur(slow.start), fmtDur(slow.work), fmtDur(slow.seen), busy)
	}
}

// ownWritesSection renders the reconciles one change causes, and what
// each sends.
func ownWritesSection(p func(string, ...any), vs []variant, pt point) {
	p("\n## Own writes: reconciles per change\n\n")
	p("One parent gets a new spec.size, and nothing else happens until the controller is idle again (no reconcile for 500 ms, an empty queue); " +
		"then the next. Reconciles: those that ran the reconciler's code for that parent (controller-runtime's count in brackets, every Reconcile call, " +
		"for D and E the skipped wake-ups included). " +
		"The first reconcile does the change's work; every later one was triggered by the controller's own writes (its children's update events, " +
		"and for B and C their own status write) and should send nothing: its requests are cache misses or writes. " +
		"kopgo's loop (D and E) is woken by every event too, its own status write's and its children's, and decides from the object's state " +
		"whether a wake-up runs the reconciler's code: one with nothing new since the last reconcile (no change, no news, no requeue due) runs none of it " +
		"and sends nothing. Those are the column \"wake-ups with nothing new\": kopgo_reconcile_skipped_total of the controller, every reason together, " +
		"its growth from the change until the controller was idle (B and C have no such count: every wake-up runs their code). " +
		"Every change of every round counted; medians, (min–max).\n\n")
	p("| variant | changes | reconciles per change | wake-ups with nothing new per change | first reconcile: requests (writes) | later reconciles | their requests (writes), all together | what they were | events per change |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---|---:|\n")
	for _, v := range vs {
		var ows []ownWrite
		for _, x := range pt.samples[v.key] {
			ows = append(ows, x.ownWrites...)
		}
		if len(ows) == 0 {
			continue
		}
		ints := func(f func(ownWrite) int64) string {
			xs := make([]int64, len(ows))
			for i, o := range ows {
				xs[i] = f(o)
			}
			slices.Sort(xs)
			if xs[0] == xs[len(xs)-1] {
				return fmt.Sprint(xs[0])
			}
			return fmt.Sprintf("%d (%d–%d)", median(xs), xs[0], xs[len(xs)-1])
		}
		var later int
		var rest trafficCount
		what := map[string]int{}
		for _, o := range ows {
			later += o.reconciles - 1
			rest = rest.add(o.rest)
			for _, r := range o.later {
				what[r]++
			}
		}
		skipped := "–"
		if v.isKopgo() {
			skipped = ints(func(o ownWrite) int64 { return int64(o.skipped) })
		}
		p("| %s %s | %d | %s [%s] | %s | %s (%s) | %d | %d (%d) | %s | %s |\n", v.key, v.name, len(ows),
			ints(func(o ownWrite) int64 { return int64(o.reconciles) }),
			ints(func(o ownWrite) int64 { return int64(o.cr) }), skipped,
			ints(func(o ownWrite) int64 { return o.first.requests }),
			ints(func(o ownWrite) int64 { return o.first.writes }),
			later, rest.requests, rest.writes, countList(what),
			ints(func(o ownWrite) int64 { return o.first.events + o.rest.events }))
	}
}

// countList renders counts as "3× APPLY widgets/status, 1× GET secrets",
// most first; "none" when empty.
func countList(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%d× %s", m[k], k)
	}
	return strings.Join(out, ", ")
}

package main

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/test/widget"
)

// latencySample is one round's change latencies of one variant.
type latencySample struct {
	// total is, per change, the time from the write until the watch saw
	// all three children carry the new value.
	total []time.Duration
	// traces break each change down, for a controller.
	traces []changeTrace
	// crTime and crCount are controller-runtime's reconcile time (its
	// whole Reconcile call: for kopgo, the loop) summed over the changes,
	// and how many reconciles; userTime and userCount the same of the
	// reconciler's code alone (for kopgo, the user's Reconcile). The
	// difference of the means is the loop's own work, status write
	// included.
	crTime, userTime   time.Duration
	crCount, userCount int
}

// changeTrace is one change of one parent, timed from the write.
type changeTrace struct {
	// parent: until the watch (the observer's, in the same process) saw
	// the Widget's new generation, a bound on when the controller's
	// informer could; start: until the first reconcile of that parent
	// began its reconciler's code; work: how long that code ran; seen:
	// until the watch saw all three children carry the new value.
	parent, start, work, seen time.Duration
	// waited is the time the client waited for the API server while
	// that code ran (every request of the process meanwhile, watches and
	// event writes apart): work less waited is the client's own time.
	waited time.Duration
	// busy is how many reconciles of other parents were running when
	// the write was sent.
	busy int
}

// changes changes the size of o.changes parents spread over the list, one
// after the other, and measures, for each, the time from the write until
// its three children carried the new value (as a watch sees them), broken
// down by m's reconciles when m is not nil (the raw floor has none).
func (e *env) changes(ctx context.Context, obs *observer, m *running, parents []*widget.Widget, change func(ctx context.Context, w, before *widget.Widget) error) (latencySample, error) {
	var out latencySample
	k := min(e.o.changes, len(parents))
	var crTime0 time.Duration
	var crCount0 uint64
	if m != nil {
		crTime0, crCount0 = reconcileTime(m.act.controller)
		m.act.record()
	}
	type pendingTrace struct {
		name    string
		started time.Time
		p       *pendingChange
		busy    int
	}
	var pend []pendingTrace
	for i := range k {
		p := parents[i*len(parents)/k]
		w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
		if err := e.admin.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return out, err
		}
		before := w.DeepCopyObject().(*widget.Widget)
		w.Spec.Size += 100
		pc := obs.expect(w.Name, w.Generation+1, wantValue(w.Spec.Size))
		busy := 0
		if m != nil {
			busy = m.act.running()
		}
		started := time.Now()
		if err := change(ctx, w, before); err != nil {
			return out, err
		}
		if err := waitClosed(ctx, pc.done, time.Minute, "change of "+w.Name); err != nil {
			return out, err
		}
		out.total = append(out.total, time.Since(started))
		pend = append(pend, pendingTrace{name: w.Name, started: started, p: pc, busy: busy})
	}
	if m == nil {
		return out, nil
	}
	// Let the last change's reconciles end, so that its work is known.
	if _, err := m.act.waitQuiet(ctx, 0); err != nil {
		return out, err
	}
	log := m.act.recorded()
	crTime1, crCount1 := reconcileTime(m.act.controller)
	out.crTime, out.crCount = crTime1-crTime0, int(crCount1-crCount0)
	for _, ev := range log {
		if !ev.end.IsZero() {
			out.userTime += ev.end.Sub(ev.begin)
			out.userCount++
		}
	}
	for _, pt := range pend {
		parentSeen, childrenSeen := obs.times(pt.p)
		tr := changeTrace{busy: pt.busy, seen: childrenSeen.Sub(pt.started)}
		if !parentSeen.IsZero() {
			tr.parent = parentSeen.Sub(pt.started)
		}
		for _, ev := range log {
			if ev.name == pt.name && !ev.begin.Before(pt.started) {
				tr.start = ev.begin.Sub(pt.started)
				if !ev.end.IsZero() {
					tr.work = ev.end.Sub(ev.begin)
					tr.waited = ev.atEnd.waited - ev.at.waited
				}
				break
			}
		}
		out.traces = append(out.traces, tr)
	}
	return out, nil
}

// ownWrite is what one change of one parent caused, until the controller
// was idle again.
type ownWrite struct {
	// reconciles ran the reconciler's code; cr is controller-runtime's
	// count of reconciles meanwhile (kopgo's loop can end one before the
	// user's code, as for an object gone).
	reconciles, cr int
	// first is what the first reconcile sent (until the next began, or
	// the controller was idle), the work the change asked for; rest what
	// all the later ones sent, triggered by the controller's own writes.
	first, rest trafficCount
	// others counts reconciles of parents other than the changed one.
	others int
	// later are the requests the later reconciles sent, "VERB resource".
	later []string
	// skipped are the wake-ups that ran none of the reconciler's code
	// (kopgo's loop judged them to have nothing new, or not yet due):
	// kopgo_reconcile_skipped_total's growth for the controller, every
	// reason together. Always 0 for B and C, which have no such count.
	skipped int
}

// ownWrites changes o.writes parents (not those of the latency), one at a
// time, each until the controller is idle, and returns what each change
// caused.
func (e *env) ownWrites(ctx context.Context, m *running, parents []*widget.Widget) ([]ownWrite, error) {
	k := min(e.o.writes, len(parents))
	var out []ownWrite
	for i := range k {
		p := parents[(i*len(parents)/k+len(parents)/(2*k)+1)%len(parents)]
		w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
		if err := e.admin.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return nil, err
		}
		before := w.DeepCopyObject().(*widget.Widget)
		w.Spec.Size += 100
		// Idle first, so that nothing of the previous change is counted.
		if _, err := m.act.waitQuiet(ctx, 0); err != nil {
			return nil, err
		}
		cr0, skipped0 := reconcileTotal(m.act.controller), skips(m.act.controller)
		m.traffic.logRequests()
		base := m.traffic.snapshot().requests
		m.act.record()
		if err := e.admin.Patch(ctx, w, client.MergeFrom(before)); err != nil {
			return nil, err
		}
		if err := m.act.waitIdleAfter(ctx, w.Name, time.Minute); err != nil {
			return nil, err
		}
		log := m.act.recorded()
		end := m.traffic.snapshot()
		ow := ownWrite{cr: int(reconcileTotal(m.act.controller) - cr0), skipped: int(skips(m.act.controller) - skipped0)}
		if len(log) > 1 {
			// The requests listed before the second reconcile began are
			// the first's: requests and writes count the same ones.
			ow.later = m.traffic.requestsSince(log[1].at.requests - base)
		}
		for j, ev := range log {
			next := end
			if j+1 < len(log) {
				next = log[j+1].at
			}
			d := next.sub(ev.at)
			switch {
			case ev.name != w.Name:
				ow.others++
			case ow.reconciles == 0:
				ow.first = d
				ow.reconciles++
			default:
				ow.rest = ow.rest.add(d)
				ow.reconciles++
			}
		}
		out = append(out, ow)
	}
	return out, nil
}

package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// activity follows one controller's reconciles: which parents it has
// started, how many are running, and when the last one ended; while
// recording, each reconcile with its times and the traffic at its start.
type activity struct {
	controller string
	// afterStop runs once the manager stopped (the recorder's Shutdown:
	// a manager given to Builder.Setup does not stop the recorder itself).
	afterStop []func()
	// traffic is the manager's request count (startManager sets it).
	traffic  *traffic
	mu       sync.Mutex
	started  map[string]bool
	calls    map[string]int
	inflight int
	last     time.Time
	// log holds the reconciles begun since record, nil when not
	// recording.
	log []reconcileEvent
}

// reconcileEvent is one reconcile: of which parent, when the reconciler's
// code began and ended (for kopgo's variants, the user's Reconcile inside
// the loop), and the manager's traffic when it began.
type reconcileEvent struct {
	name       string
	begin, end time.Time
	at, atEnd  trafficCount
}

func newActivity(controller string) *activity {
	return &activity{controller: controller, started: map[string]bool{}, calls: map[string]int{}, last: time.Now()}
}

// begin records the start of a reconcile of name and returns its handle
// for end.
func (a *activity) begin(name string) int {
	var at trafficCount
	if a.traffic != nil {
		at = a.traffic.snapshot()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.started[name] = true
	a.calls[name]++
	a.inflight++
	if a.log == nil {
		return -1
	}
	a.log = append(a.log, reconcileEvent{name: name, begin: time.Now(), at: at})
	return len(a.log) - 1
}

func (a *activity) end(i int) {
	var at trafficCount
	if a.traffic != nil {
		at = a.traffic.snapshot()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inflight--
	a.last = time.Now()
	if i >= 0 && i < len(a.log) {
		a.log[i].end, a.log[i].atEnd = a.last, at
	}
}

// running returns how many reconciles are running.
func (a *activity) running() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inflight
}

// record starts recording each reconcile.
func (a *activity) record() {
	a.mu.Lock()
	a.log = make([]reconcileEvent, 0, 16)
	a.mu.Unlock()
}

// recorded returns the reconciles recorded so far, and stops recording.
func (a *activity) recorded() []reconcileEvent {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.log
	a.log = nil
	return out
}

// began reports whether a reconcile of name was recorded.
func (a *activity) began(name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range a.log {
		if e.name == name {
			return true
		}
	}
	return false
}

// quietFor is how long a controller must have been idle, with an empty
// queue, to count as done.
const quietFor = 500 * time.Millisecond

// waitQuiet waits until at least n parents were reconciled, no reconcile
// is running, none ended in the last quietFor and the controller's
// workqueue is empty. It returns when the condition first held.
func (a *activity) waitQuiet(ctx context.Context, n int) (time.Time, error) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var allSeen time.Time
	for {
		a.mu.Lock()
		seen, inflight, last := len(a.started), a.inflight, a.last
		a.mu.Unlock()
		if seen >= n && allSeen.IsZero() {
			allSeen = time.Now()
		}
		if seen >= n && inflight == 0 && time.Since(last) > quietFor && queueDepth(a.controller) == 0 {
			return last, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("controller %s: %d of %d parents reconciled, %d running: %w", a.controller, seen, n, inflight, ctx.Err())
		case <-tick.C:
		}
	}
}

// waitIdleAfter waits until a reconcile of name was recorded and the
// controller is then quiet (see waitQuiet).
func (a *activity) waitIdleAfter(ctx context.Context, name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for !a.began(name) {
		if time.Now().After(deadline) {
			return fmt.Errorf("controller %s: no reconcile of %s within %s", a.controller, name, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	_, err := a.waitQuiet(ctx, 0)
	return err
}

// calls returns how many times the reconciler's code ran, for every
// parent together.
func (a *activity) callsTotal() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var total int64
	for _, n := range a.calls {
		total += int64(n)
	}
	return total
}

// deferrals reads kopgo_reconcile_deferred_total of a controller (kopgo's
// variants: reconciles put off until the cache showed the controller's own
// last write), summed over outcomes.
func deferrals(controller string) float64 {
	return counterSum("kopgo_reconcile_deferred_total", "controller", controller)
}

// skips reads kopgo_reconcile_skipped_total of a controller (kopgo's
// variants: wake-ups that ran none of the reconciler's code), summed over
// reasons.
func skips(controller string) float64 {
	return counterSum("kopgo_reconcile_skipped_total", "controller", controller)
}

// reconcileTotal reads controller-runtime's reconcile_total of a
// controller, summed over results.
func reconcileTotal(controller string) float64 {
	return counterSum("controller_runtime_reconcile_total", "controller", controller)
}

// counterSum sums a counter's series whose label has the given value.
func counterSum(metric, label, value string) float64 {
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		return 0
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != metric {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// reconcileTime reads controller-runtime's reconcile_time_seconds
// histogram of a controller: its sum and count.
func reconcileTime(controller string) (time.Duration, uint64) {
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		return 0, 0
	}
	for _, mf := range mfs {
		if mf.GetName() != "controller_runtime_reconcile_time_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					h := m.GetHistogram()
					return time.Duration(h.GetSampleSum() * float64(time.Second)), h.GetSampleCount()
				}
			}
		}
	}
	return 0, 0
}

// queueDepth reads controller-runtime's workqueue_depth of a controller.
func queueDepth(controller string) float64 {
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		return 0
	}
	for _, mf := range mfs {
		if mf.GetName() != "workqueue_depth" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == controller {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return 0
}

// summary describes the controller's work so far, for -v: reconciles in
// all and per parent, and controller-runtime's reconcile results and
// workqueue retries.
func (a *activity) summary() string {
	a.mu.Lock()
	total, most := 0, 0
	hist := map[int]int{}
	for _, n := range a.calls {
		total += n
		most = max(most, n)
		hist[n]++
	}
	a.mu.Unlock()
	out := fmt.Sprintf("reconciles %d (per parent: max %d, histogram %v)", total, most, hist)
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		return out
	}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "controller_runtime_reconcile_total", "workqueue_retries_total", "controller_runtime_reconcile_errors_total":
		default:
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["controller"] != a.controller && labels["name"] != a.controller {
				continue
			}
			v := m.GetCounter().GetValue()
			if v == 0 {
				continue
			}
			out += fmt.Sprintf("; %s%s=%v", strings.TrimPrefix(mf.GetName(), "controller_runtime_"), labelSuffix(labels["result"]), v)
		}
	}
	return out
}

func labelSuffix(v string) string {
	if v == "" {
		return ""
	}
	return "{" + v + "}"
}

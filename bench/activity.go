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
// started, how many are running, and when the last one ended.
type activity struct {
	controller string
	// afterStop runs once the manager stopped (the recorder's Shutdown:
	// a manager given to Builder.Setup does not stop the recorder itself).
	afterStop []func()
	mu        sync.Mutex
	started   map[string]bool
	calls     map[string]int
	inflight  int
	last      time.Time
}

func newActivity(controller string) *activity {
	return &activity{controller: controller, started: map[string]bool{}, calls: map[string]int{}, last: time.Now()}
}

func (a *activity) begin(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.started[name] = true
	a.calls[name]++
	a.inflight++
}

func (a *activity) end() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inflight--
	a.last = time.Now()
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

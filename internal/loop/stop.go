package loop

import (
	"context"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// After the controller stops. Its object-health entries live in its
// metrics, which outlive it (observability.Default is the process's): a
// process that goes on after a manager stopped (a test suite, a replica
// that keeps serving) would hold them, and serve them, for good. The
// Forgetter, a runnable of the controller's manager, drops them once the
// manager stops and the calls in flight have returned; reconciles after
// that (none are started by a stopped controller) run nothing.

// inflight counts the loop's reconciles in progress, and stops new ones
// once the controller stopped.
type inflight struct {
	mu      sync.Mutex
	n       int
	stopped bool
	idle    chan struct{} // closed when stopped and n reaches 0
}

// enter reports whether a reconcile may run; it must be followed by
// leave when it does.
func (f *inflight) enter() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return false
	}
	f.n++
	return true
}

func (f *inflight) leave() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.stopped && f.n == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
}

// stop stops new reconciles and returns a channel closed once none is in
// progress.
func (f *inflight) stop() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	done := make(chan struct{})
	if f.n == 0 {
		close(done)
	} else {
		f.idle = done
	}
	return done
}

// Forgetter returns the manager runnable that, when the manager stops,
// waits for the reconciles in flight (at most the drain window and a
// second) and then removes the controller's objects from its metrics'
// health gauges (observability.Metrics.ForgetController). It runs where
// the controller runs (under leader election, on the leader).
func (l *Loop[T]) Forgetter() manager.Runnable {
	return manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		wait := time.NewTimer(l.o.Drain + time.Second)
		defer wait.Stop()
		select {
		case <-l.active.stop():
		case <-wait.C:
		}
		l.o.Metrics.ForgetController(l.name)
		return nil
	})
}

package loop

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kopgo/kopgo/reconciler"
)

// abandonGrace is how long a call past its deadline (or past the shutdown
// drain) may take to return before the Adapter stops waiting for it.
const abandonGrace = time.Second

// abandonedPoll is how soon an object whose abandoned call has not yet
// returned is looked at again.
const abandonedPoll = time.Second

// call runs f, turning a panic into an error and, under a reconcile
// timeout, a passed deadline into a Timeout error.
//
// Without a timeout, f runs on the calling goroutine (controller-runtime's
// worker), which has nothing else to do meanwhile. Handing it to another
// goroutine and waiting cost two goroutine switches per reconcile, 5 to 6
// µs of a converged reconcile's 65 in the bench. A call that ignores its
// context then holds its worker until it returns, as in any
// controller-runtime reconciler; at shutdown the manager waits for it
// until its graceful-shutdown window ends.
//
// With a timeout, f runs on a goroutine of its own (a worker, see
// [workers]), so that a call that ignores its context is not waited for
// past its deadline plus [abandonGrace]: it is left running (abandoned =
// true), the worker is freed for other objects, and req is marked so that
// the object is not reconciled again until that call returns (see
// [Loop.stillRunning]).
func (l *Loop[T]) call(ctx context.Context, req reconcile.Request, f func(context.Context) (reconciler.Action, error)) (action reconciler.Action, abandoned bool, err error) {
	if l.o.Timeout <= 0 {
		r := guarded(ctx, ctx, f)
		return r.action, false, r.err
	}
	cctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
	done := make(chan returned, 1)
	l.workers.do(func() { done <- guarded(ctx, cctx, f) })

	var r returned
	select {
	case r = <-done:
	case <-cctx.Done():
		grace := time.NewTimer(abandonGrace)
		select {
		case r = <-done:
			grace.Stop()
		case <-grace.C:
			l.abandon(ctx, req, done, cancel)
			return reconciler.Action{}, true, &timeoutError{after: l.o.Timeout, abandoned: true}
		}
	}
	cancel()
	if cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		r.err = &timeoutError{after: l.o.Timeout, cause: r.err}
	}
	return r.action, false, r.err
}

// guarded calls f with cctx and turns a panic into an error, logged with
// its stack under ctx's logger.
func guarded(ctx, cctx context.Context, f func(context.Context) (reconciler.Action, error)) (r returned) {
	defer func() {
		if v := recover(); v != nil {
			log.FromContext(ctx).Error(fmt.Errorf("panic: %v", v), "Reconciler panicked", "stack", string(debug.Stack()))
			r = returned{err: &panicError{value: v}}
		}
	}()
	r.action, r.err = f(cctx)
	return r
}

// returned is what a call of user code returned.
type returned struct {
	action reconciler.Action
	err    error
}

// abandon records that a call for req is still running and forgets it when
// it returns.
func (l *Loop[T]) abandon(ctx context.Context, req reconcile.Request, done <-chan returned, cancel context.CancelFunc) {
	finished := make(chan struct{})
	l.mu.Lock()
	l.abandoned[req] = finished
	l.mu.Unlock()
	logger := log.FromContext(ctx)
	logger.Error(nil, "Reconcile ignored its cancellation; leaving it running and freeing the worker", "timeout", l.o.Timeout)
	go func() {
		r := <-done
		cancel()
		l.mu.Lock()
		delete(l.abandoned, req)
		l.mu.Unlock()
		close(finished)
		logger.Info("Abandoned reconcile returned; its result is discarded", "error", fmt.Sprint(r.err))
	}()
}

// stillRunning reports whether an abandoned call for req has not returned.
func (l *Loop[T]) stillRunning(req reconcile.Request) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.abandoned[req]
	return ok
}

// errShutdown is the cause of a reconcile context cancelled when the
// shutdown drain ended.
var errShutdown = fmt.Errorf("controller shut down")

// drain returns a context for the user's work that, unlike ctx, is not
// cancelled the moment the controller stops: it ends grace after ctx ends,
// so a reconcile in flight at SIGTERM can finish. With grace 0 it is ctx.
// release must be called when the work is done.
func drain(ctx context.Context, grace time.Duration) (_ context.Context, release func()) {
	if grace <= 0 {
		return ctx, func() {}
	}
	dctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	var (
		mu    sync.Mutex
		timer *time.Timer
	)
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		timer = time.AfterFunc(grace, func() { cancel(errShutdown) })
	})
	return dctx, func() {
		stop()
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		cancel(nil)
	}
}

// workerIdle is how long a worker goroutine waits for the next call before
// it ends.
const workerIdle = 10 * time.Second

// workers runs the calls made under a reconcile timeout (see [Loop.call])
// on goroutines that outlive one call. A reconcile
// started on a fresh goroutine starts on a small stack and grows it again,
// copying it each time: some 8% of a converged reconcile's CPU in the
// bench (runtime.newstack), which a worker that already grew its stack
// does not pay. A call is handed to an idle worker when there is one, else
// to a new one; a worker idle for [workerIdle] ends, so an idle controller
// holds none, and a call left running past its deadline holds only its
// own.
type workers struct {
	work chan func()
	idle time.Duration
}

func newWorkers() *workers { return &workers{work: make(chan func()), idle: workerIdle} }

// do runs f on a worker.
func (w *workers) do(f func()) {
	select {
	case w.work <- f:
	default:
		go w.run(f)
	}
}

// run runs f, then the calls handed to it, until none comes for w.idle.
func (w *workers) run(f func()) {
	idle := time.NewTimer(w.idle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(w.idle)
		select {
		case f = <-w.work:
		case <-idle.C:
			return
		}
	}
}

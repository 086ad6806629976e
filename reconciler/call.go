package reconciler

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// abandonGrace is how long a call past its deadline (or past the shutdown
// drain) may take to return before the Adapter stops waiting for it.
const abandonGrace = time.Second

// abandonedPoll is how soon an object whose abandoned call has not yet
// returned is looked at again.
const abandonedPoll = time.Second

// call runs f under the reconcile timeout in a goroutine of its own,
// turning a panic into an error and a passed deadline into a Timeout error.
//
// A call that ignores its context is not waited for past its deadline plus
// [abandonGrace]: it is left running (abandoned = true), the worker is
// freed for other objects, and req is marked so that the object is not
// reconciled again until that call returns (see [adapter.stillRunning]).
func (a *adapter[T]) call(ctx context.Context, req reconcile.Request, f func(context.Context) error) (abandoned bool, err error) {
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if a.o.Timeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, a.o.Timeout)
	}
	done := make(chan error, 1)
	go func() {
		var err error
		defer func() {
			if r := recover(); r != nil {
				log.FromContext(ctx).Error(fmt.Errorf("panic: %v", r), "Reconciler panicked", "stack", string(debug.Stack()))
				err = &panicError{value: r}
			}
			done <- err
		}()
		err = f(cctx)
	}()

	select {
	case err = <-done:
	case <-cctx.Done():
		grace := time.NewTimer(abandonGrace)
		select {
		case err = <-done:
			grace.Stop()
		case <-grace.C:
			a.abandon(ctx, req, done, cancel)
			return true, &timeoutError{after: a.o.Timeout, abandoned: true}
		}
	}
	cancel()
	if cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		err = &timeoutError{after: a.o.Timeout, cause: err}
	}
	return false, err
}

// abandon records that a call for req is still running and forgets it when
// it returns.
func (a *adapter[T]) abandon(ctx context.Context, req reconcile.Request, done <-chan error, cancel context.CancelFunc) {
	finished := make(chan struct{})
	a.mu.Lock()
	a.abandoned[req] = finished
	a.mu.Unlock()
	logger := log.FromContext(ctx)
	logger.Error(nil, "Reconcile ignored its cancellation; leaving it running and freeing the worker", "timeout", a.o.Timeout)
	go func() {
		err := <-done
		cancel()
		a.mu.Lock()
		delete(a.abandoned, req)
		a.mu.Unlock()
		close(finished)
		logger.Info("Abandoned reconcile returned; its result is discarded", "error", fmt.Sprint(err))
	}()
}

// stillRunning reports whether an abandoned call for req has not returned.
func (a *adapter[T]) stillRunning(req reconcile.Request) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.abandoned[req]
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

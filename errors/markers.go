package errors

import (
	stderrors "errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// terminalError marks an error that retrying cannot fix. It adds nothing to
// the message.
type terminalError struct{ err error }

func (t *terminalError) Error() string { return t.err.Error() }
func (t *terminalError) Unwrap() error { return t.err }

// Is makes a kopgo Terminal error also controller-runtime's terminal error
// (errors.Is(err, reconcile.TerminalError(nil)), the test controller-runtime
// applies), so a plain controller-runtime reconciler that returns it stops
// retrying too.
func (t *terminalError) Is(target error) bool { return stderrors.Is(crTerminal, target) }

// crTerminal is controller-runtime's terminal marker, for comparisons.
var crTerminal = reconcile.TerminalError(nil)

// Terminal marks err as terminal: the reconcile loop stops retrying the object
// (until it changes) and sets its Stalled condition to True with err's
// message. The cause stays reachable through Is, As and [KindOf], and the
// message is the cause's. Terminal(nil) is nil.
//
// It is also controller-runtime's terminal error: a plain controller-runtime
// reconciler that returns it is not retried either (controller-runtime logs
// it and counts it in controller_runtime_terminal_reconcile_errors_total),
// and [IsTerminal] recognises reconcile.TerminalError as well, so
// status.SetError reports either as Stalled.
//
// This makes the errors package import controller-runtime's small reconcile
// package, beyond the client that leaf packages may use: one marker that
// works in both worlds is worth it.
func Terminal(err error) error {
	if err == nil {
		return nil
	}
	return &terminalError{err: err}
}

// IsTerminal reports whether err, or an error it wraps, was marked [Terminal]
// or is controller-runtime's reconcile.TerminalError. Terminal wins over
// [RequeueAfter] when an error carries both.
func IsTerminal(err error) bool {
	return stderrors.Is(err, crTerminal) // kopgo's terminalError.Is says yes too
}

// requeueError asks for the object to be reconciled again after a delay.
type requeueError struct {
	err   error // nil: a plain requeue, nothing failed
	after time.Duration
}

func (r *requeueError) Error() string {
	if r.err == nil {
		return fmt.Sprintf("requeue after %s", r.after)
	}
	return r.err.Error()
}

func (r *requeueError) Unwrap() error { return r.err }

// RequeueAfter asks the reconcile loop to try the object again after d
// instead of after its exponential backoff. The error's message is err's.
//
// With a nil err it is a plain request to come back later: nothing failed,
// and the reconcile loop neither logs it nor counts it as an error (see
// [Failed]). Its message is "requeue after 30s". A d of zero or less
// then asks for the next attempt as soon as the rate limiter allows.
//
// With a non-nil err and a d of zero or less it returns err unchanged: there
// is no delay to carry, and the default backoff applies.
func RequeueAfter(err error, d time.Duration) error {
	if d <= 0 {
		if err != nil {
			return err
		}
		d = 0
	}
	return &requeueError{err: err, after: d}
}

// RequeueAfterOf returns the delay that [RequeueAfter] asked for somewhere in
// err's tree, and whether it did. When several markers are joined, it returns
// the shortest delay: the earliest anyone asked to come back.
func RequeueAfterOf(err error) (time.Duration, bool) {
	var (
		shortest time.Duration
		found    bool
	)
	inChain(func(err error) bool {
		if r, ok := err.(*requeueError); ok && (!found || r.after < shortest) { //nolint:errorlint // inChain walks the tree
			shortest, found = r.after, true
		}
		return false // visit every error
	})(err)
	return shortest, found
}

// Failed reports whether err reports a failure: it is not nil, and not only
// a request to come back later. An error is only such a request when every
// branch of its tree ends in a [RequeueAfter] with a nil cause and none is
// [Terminal]. Wrapping adds context, not failure, so
// fmt.Errorf("sync: %w", RequeueAfter(nil, d)) has not failed, while
// Join(RequeueAfter(nil, d), err) has: the error is not dropped.
func Failed(err error) bool {
	return err != nil && !requeueOnly(err)
}

// requeueOnly is the tree walk behind [Failed].
func requeueOnly(err error) bool {
	switch e := err.(type) { //nolint:errorlint // the tree is walked by hand
	case nil:
		return false
	case *requeueError:
		return e.err == nil
	case *terminalError:
		return false
	case interface{ Unwrap() []error }:
		n := 0
		for _, err := range e.Unwrap() {
			if err == nil {
				continue
			}
			if !requeueOnly(err) {
				return false
			}
			n++
		}
		return n > 0
	case interface{ Unwrap() error }:
		return requeueOnly(e.Unwrap())
	}
	return false
}

package errors

import (
	stderrors "errors"
	"fmt"
	"time"
)

// terminalError marks an error that retrying cannot fix.
type terminalError struct{ err error }

func (t *terminalError) Error() string { return t.err.Error() }
func (t *terminalError) Unwrap() error { return t.err }

// Terminal marks err as terminal: the reconcile loop stops retrying the object
// (until it changes) and sets its Stalled condition to True with err's
// message. The cause stays reachable through Is, As and [KindOf].
// Terminal(nil) is nil.
func Terminal(err error) error {
	if err == nil {
		return nil
	}
	return &terminalError{err: err}
}

// IsTerminal reports whether err, or an error it wraps, was marked [Terminal].
func IsTerminal(err error) bool {
	_, ok := stderrors.AsType[*terminalError](err)
	return ok
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

// RequeueAfter asks the reconcile loop to try the object again after d,
// instead of after its exponential backoff. With a nil err it is a plain
// request to come back later: nothing failed, nothing is logged or counted
// as an error (see [IsRequeueOnly]).
func RequeueAfter(err error, d time.Duration) error {
	return &requeueError{err: err, after: d}
}

// RequeueAfterOf returns the delay of the first [RequeueAfter] in err's chain.
func RequeueAfterOf(err error) (time.Duration, bool) {
	r, ok := stderrors.AsType[*requeueError](err)
	if !ok {
		return 0, false
	}
	return r.after, true
}

// IsRequeueOnly reports whether err is a [RequeueAfter] with no cause: a
// request to come back later, not a failure.
func IsRequeueOnly(err error) bool {
	r, ok := stderrors.AsType[*requeueError](err)
	return ok && r.err == nil && !IsTerminal(err)
}

package loop

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/telemetry"
)

// decision is what [classify] makes of an attempt, before the status write.
type decision struct {
	result      telemetry.Result
	err         error // the failure recorded in metrics and the span; nil for none
	writeStatus bool
	statusErr   error // what status.Finish records

	cr    reconcile.Result // what controller-runtime gets ...
	crErr error            // ... and its error
	// retry is the rate limiter's hint for a failure returned to
	// controller-runtime: the delay asked for (0: backoff), the error's
	// own delay, and whether the failure was the API server being away.
	retry hint
	// self is a requeue the loop adds itself (controller-runtime drops the
	// result of a reconcile that returns a terminal error); 0: none.
	self time.Duration
	// hold is the delay the failure's error carried (a provider's
	// Retry-After): no reconcile before it passes, whatever wakes the
	// object (see wake.go); 0: none.
	hold time.Duration

	warning      string // reason of a Warning event; "": none
	note         string
	forget       bool // drop a pending cleanup that cannot succeed
	loud         bool // log the failure at error level
	terminal     bool
	statusFailed bool // the status write failed (settle)
}

// classify turns an attempt into a decision. It is pure: every side
// effect it decides on happens later, once, in [Loop.record].
func classify(a attempt, o Options) decision {
	var d decision
	after, requeue := a.action.When()
	switch {
	case a.phase == phaseNone || (a.gone && a.err == nil) || (a.gone && koperrors.KindOf(a.err) == koperrors.NotFound):
		// Nothing to do, or the object went away: nothing failed.
		d.result = telemetry.ResultSuccess
		return d
	case a.shutdown:
		// Cut short by shutdown: the next leader redoes it, and a
		// "context canceled" in Ready would be a lie about the object.
		// The queue is closed, so the error is for the record only.
		d.result, d.err, d.crErr = telemetry.ResultError, a.err, a.err
		return d
	case a.err == nil:
		d.result = telemetry.ResultSuccess
		if requeue {
			d.result = telemetry.ResultRequeue
			d.cr = requeueResult(after)
		}
		// A finished cleanup leaves an object on its way out: nothing to
		// say. One not finished yet writes what its hook reported (and
		// clears an earlier failure).
		d.writeStatus = a.setter != nil && !a.finished
		return d
	}

	err := a.err
	if a.phase == phaseCleanup || a.phase == phaseGone {
		err = cleanupError(err, a.phase, o.FinalizerName)
	}
	d.err = err
	d.writeStatus = a.setter != nil && a.phase != phaseGone
	d.statusErr = err
	d.note = err.Error()
	var p *panicError
	var to *timeoutError
	switch {
	case koperrors.IsTerminal(err):
		d.result, d.terminal, d.loud = telemetry.ResultTerminal, true, true
		d.warning = koperrors.ReasonOf(err)
		d.crErr = err
		if !errors.Is(err, reconcile.TerminalError(nil)) {
			d.crErr = reconcile.TerminalError(err) // a 422 naming a field
		}
		if a.phase == phaseGone {
			d.forget, d.warning = true, ""
			return d
		}
		d.hold = errorDelay(err, requeue && after > 0)
		d.self = max(o.StalledRetry, d.hold)
		if requeue && after > 0 {
			d.self = after
		}
		return d
	case koperrors.KindOf(err) == koperrors.Conflict && a.conflicts <= quietConflicts:
		d.result, d.err, d.writeStatus = telemetry.ResultConflict, nil, false
		d.cr = reconcile.Result{Requeue: true} //nolint:staticcheck // the one way to requeue through the rate limiter without an error
		return d
	case errors.As(err, &p):
		d.result = telemetry.ResultPanic
	case errors.As(err, &to):
		d.result, d.warning = telemetry.ResultTimeout, "Timeout"
	default:
		d.result, d.warning = telemetry.ResultError, koperrors.ReasonOf(err)
	}
	d.loud = true
	d.crErr = err
	d.retry = hint{after: a.policy, atLeast: errorDelay(err, requeue && after > 0), transient: fromAPIServerOutage(err, o.APIServer)}
	if requeue && after > 0 {
		d.retry.after = after // asked for with the failure: wins over the policy
	}
	d.hold = d.retry.atLeast
	return d
}

// errorDelay is the delay err carries ([koperrors.RetryAfterOf], such as
// a provider's Retry-After), which the retry waits at least; 0 when the
// reconciler asked for a delay of its own with the failure, which wins.
func errorDelay(err error, asked bool) time.Duration {
	if asked {
		return 0
	}
	d, _ := koperrors.RetryAfterOf(err)
	return d
}

// fromAPIServerOutage reports whether err is the API server being
// unreachable or overloaded (kind Unavailable or Timeout, and from a
// request to the API server): such a failure is retried within
// [transientMax], since the server's return is what the controller waits
// for. The same kinds from anywhere else (an external host refusing
// connections, a provider's 503, a reconcile's own deadline) back off
// exponentially, so that a system that is down is not asked every few
// seconds per object. A request to the API server is told by its
// Kubernetes API status (a 503 or 504 from it, or from an aggregated API
// behind it) or by the URL of a failed connection, whose host is
// apiServer.
func fromAPIServerOutage(err error, apiServer string) bool {
	kind := koperrors.KindOf(err)
	if kind != koperrors.Unavailable && kind != koperrors.Timeout {
		return false
	}
	if _, ok := errors.AsType[*timeoutError](err); ok {
		return false // the reconcile's own deadline
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return true
	}
	if ue, ok := errors.AsType[*url.Error](err); ok && apiServer != "" {
		u, perr := url.Parse(ue.URL)
		return perr == nil && u.Host == hostOf(apiServer)
	}
	return false
}

// hostOf is the host (and port) of a rest.Config's Host, which may be a
// URL or a bare host:port.
func hostOf(h string) string {
	if u, err := url.Parse(h); err == nil && u.Host != "" {
		return u.Host
	}
	return h
}

// settle combines a decision with the status write's error into the
// final outcome. A failed status write fails the reconcile whatever the
// decision was, so it is retried with backoff until status is written.
func settle(d decision, werr error, apiServer string) decision {
	if werr == nil {
		return d
	}
	d.result, d.err, d.crErr = telemetry.ResultError, werr, werr
	d.cr, d.self, d.terminal = reconcile.Result{}, 0, false
	d.retry = hint{transient: fromAPIServerOutage(werr, apiServer)}
	d.statusFailed = true
	return d
}

// requeueResult is controller-runtime's result for a requeue after d (0:
// as soon as the rate limiter allows).
func requeueResult(after time.Duration) reconcile.Result {
	if after > 0 {
		return reconcile.Result{RequeueAfter: after}
	}
	return reconcile.Result{Requeue: true} //nolint:staticcheck // the one way to requeue through the rate limiter without an error
}

// cleanupError names the finalizer a failed cleanup holds, and, for a
// terminal failure, how to let the object go.
func cleanupError(err error, ph phase, finalizer string) error {
	if ph == phaseGone {
		return fmt.Errorf("cleanup after deletion (finalizer %s was skipped by the API server): %w", finalizer, err)
	}
	if koperrors.IsTerminal(err) {
		return fmt.Errorf("cleanup cannot finish, so finalizer %s blocks deletion: %w (fix the cause and the cleanup is retried; "+
			"or remove %s from metadata.finalizers to delete the object without it)", finalizer, err, finalizer)
	}
	return fmt.Errorf("cleanup for finalizer %s: %w", finalizer, err)
}

// panicError is a recovered panic in user code.
type panicError struct{ value any }

func (p *panicError) Error() string { return fmt.Sprintf("reconciler panicked: %v", p.value) }

// timeoutError says the reconcile ran past its deadline.
type timeoutError struct {
	after     time.Duration
	cause     error
	abandoned bool
}

func (t *timeoutError) Error() string {
	switch {
	case t.abandoned:
		return fmt.Sprintf("reconcile did not finish within %s and ignored its cancellation; it is left running and the object is retried once it returns", t.after)
	case t.cause != nil:
		return fmt.Sprintf("reconcile did not finish within %s: %v", t.after, t.cause)
	}
	return fmt.Sprintf("reconcile did not finish within %s", t.after)
}

func (t *timeoutError) Unwrap() error { return context.DeadlineExceeded }

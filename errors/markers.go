package errors

import (
	stderrors "errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// Terminal marks err as terminal: a verdict about the object's spec, which
// retrying the same work cannot change. The reconcile loop reports the
// object Stalled=True with err's message and stops retrying it with
// backoff (it looks again when the object changes, and after a long
// interval anyway). The cause stays reachable through Is, As and
// [KindOf], and the message is the cause's. Terminal(nil) is nil.
//
// It is also controller-runtime's terminal error: a plain
// controller-runtime reconciler that returns it is not retried either
// (controller-runtime logs it and counts it in
// controller_runtime_terminal_reconcile_errors_total), and [IsTerminal]
// recognises reconcile.TerminalError as well, so status.SetError reports
// either as Stalled.
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

// IsTerminal reports whether err is a verdict about the spec that retrying
// cannot change:
//
//   - err, or an error it wraps, was marked [Terminal], is
//     controller-runtime's reconcile.TerminalError, or says it is one
//     through its Is method, as a typed verdict does (apply.TakeoverError:
//     the Applier refused to take over an object someone else holds;
//     apply.ConflictError: another field manager owns a field the apply
//     sets without force);
//   - the API server rejected the request for its content: a 422 Invalid
//     that names at least one field among its causes (a child the spec
//     asked for is invalid), or a 400 BadRequest (a body the server cannot
//     even decode, such as a value with control characters).
//
// A 422 without any field cause is not about the spec (an admission
// plug-in or the server itself failed), so it is retried like any other
// failure. The server's verdicts can still be wrong for a while (after an
// outage, a Service's cluster IP allocation fails with a field cause on
// spec.clusterIPs until the allocator is back): the reconcile loop
// therefore retries Stalled objects on a long interval too.
func IsTerminal(err error) bool {
	if err == nil {
		return false
	}
	if stderrors.Is(err, crTerminal) { // kopgo's terminalError.Is says yes too
		return true
	}
	if apierrors.IsBadRequest(err) {
		return true
	}
	if !apierrors.IsInvalid(err) {
		return false
	}
	var se apierrors.APIStatus
	if !stderrors.As(err, &se) || se.Status().Details == nil {
		return false
	}
	for _, c := range se.Status().Details.Causes {
		if c.Field != "" {
			return true
		}
	}
	return false
}

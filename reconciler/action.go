package reconciler

import (
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
)

// Action says when a reconcile wants its object looked at again, whatever
// happened: kube-rs' and koprs' Action. The zero value is [Done].
//
// It is a value beside the error, never inside it: a requeue is not a
// failure and changes no condition (Ready reflects the work, not the
// schedule), and a failure keeps the requeue its reconciler asked for (a
// CronJob whose child was rejected still runs its next schedule).
type Action struct {
	requeue bool
	after   time.Duration
}

// Done asks for nothing: the object is reconciled again when it or
// something it watches changes (or after a failure, by the retry policy).
func Done() Action { return Action{} }

// RequeueAfter asks for the object to be reconciled again after d, even if
// nothing changes (polling an external system, a schedule, a renewal). A d
// of zero or less is [Requeue].
//
// With a failure it is the delay before the retry, instead of the
// exponential backoff; with a terminal failure, the object is Stalled and
// still reconciled after d.
func RequeueAfter(d time.Duration) Action {
	if d <= 0 {
		return Requeue()
	}
	return Action{requeue: true, after: d}
}

// Requeue asks for the object to be reconciled again as soon as the rate
// limiter allows (a few milliseconds at first, backing off if it keeps
// asking): work that is not finished and is worth another pass at once.
func Requeue() Action { return Action{requeue: true} }

// When reports whether the action asks for a requeue and after how long; a
// requeue with no delay is one as soon as the rate limiter allows.
func (a Action) When() (after time.Duration, requeue bool) { return a.after, a.requeue }

// String renders "done", "requeue" or "requeue after 30s".
func (a Action) String() string {
	switch {
	case !a.requeue:
		return "done"
	case a.after == 0:
		return "requeue"
	}
	return fmt.Sprintf("requeue after %s", a.after)
}

// Result maps an Action and an error to what a plain controller-runtime
// reconciler returns, so that a kubebuilder reconciler that uses kopgo's
// helpers behaves as kopgo's own loop does:
//
//   - no error: the requeue as asked (ctrl.Result{RequeueAfter: d}, or a
//     rate-limited requeue for [Requeue]); controller-runtime counts it as
//     a success or a requeue, never as an error;
//   - a terminal error (koperrors.IsTerminal) without a requeue: the error,
//     which controller-runtime counts as terminal and does not retry;
//   - a terminal error with a requeue: the requeue and no error, since
//     controller-runtime drops the result of a reconcile that returns an
//     error: the schedule goes on (record the failure in status with
//     status.SetError, which shows Stalled);
//   - any other error: the error, retried with controller-runtime's
//     backoff (a delay asked for with it needs kopgo's loop or a rate
//     limiter of your own).
//
// In a Reconcile method:
//
//	action, err := r.reconcile(ctx, &cronJob)
//	status.SetError(&cronJob, err)
//	...
//	return reconciler.Result(action, err)
func Result(a Action, err error) (reconcile.Result, error) {
	switch {
	case err != nil && (!koperrors.IsTerminal(err) || !a.requeue):
		return reconcile.Result{}, err
	case !a.requeue:
		return reconcile.Result{}, nil
	case a.after > 0:
		return reconcile.Result{RequeueAfter: a.after}, nil
	}
	return reconcile.Result{Requeue: true}, nil //nolint:staticcheck // the one way to requeue through the rate limiter without an error
}

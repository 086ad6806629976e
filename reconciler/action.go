package reconciler

import (
	"errors"
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

// StalledRetry is the interval on which kopgo's reconcile loop looks again
// at a Stalled object (a terminal failure) although nothing changed: a
// terminal verdict is a claim about the spec, and one made by mistake (an
// API server that answered 422 while part of it was starting, a name that
// someone else held and has since released) must not last forever.
//
// A plain controller-runtime reconciler gets the same retry by asking for
// it with the failure: Result(RequeueAfter(StalledRetry), err) (see
// [Result]).
const StalledRetry = 10 * time.Minute

// Result maps an Action and an error to what a plain controller-runtime
// reconciler returns, so that a kubebuilder reconciler that uses kopgo's
// helpers behaves as kopgo's own loop does:
//
//   - no error: the requeue as asked (ctrl.Result{RequeueAfter: d}, or a
//     rate-limited requeue for [Requeue]); controller-runtime counts it as
//     a success or a requeue, never as an error;
//   - a terminal error ([koperrors.IsTerminal]: marked Terminal, a 422
//     naming a field, an apply.TakeoverError or apply.ConflictError) with [Done] or [Requeue]:
//     the error as reconcile.TerminalError, which controller-runtime logs
//     once, counts in controller_runtime_terminal_reconcile_errors_total
//     and does not retry: the object is reconciled again when it, or
//     something it watches, changes. A [Requeue] is dropped, since
//     retrying at once is what terminal rules out;
//   - a terminal error with [RequeueAfter] d: ctrl.Result{RequeueAfter: d}
//     and no error, since controller-runtime drops the result of a
//     reconcile that returns an error: the schedule goes on (a CronJob
//     whose Job was refused still runs its next schedule), and
//     controller-runtime counts a requeue, not an error. Record the
//     failure in status with status.SetError, which shows Stalled;
//   - any other error that carries a delay ([koperrors.RetryAfterOf]: a
//     provider's 429 or 503 with Retry-After, through
//     [koperrors.FromHTTP]): ctrl.Result{RequeueAfter: delay} and no
//     error, for the same reason, so the retry comes no sooner than the
//     provider asked; the delay of a [RequeueAfter] returned with it wins,
//     as in kopgo's loop. controller-runtime counts a requeue and logs
//     nothing: record the failure with status.SetError (Ready=False,
//     Reconciling=True) and log it if you want a line;
//   - any other error: the error, retried with controller-runtime's
//     backoff (a delay asked for with it needs kopgo's loop or a rate
//     limiter of your own).
//
// controller-runtime cannot both count a terminal error and requeue, so
// kopgo's loop, which owns its queue, retries a Stalled object after
// [StalledRetry] on its own, and Result cannot. To keep that retry in a
// plain reconciler, ask for it with the failure:
//
//	return reconciler.Result(reconciler.RequeueAfter(reconciler.StalledRetry), err)
//
// In a Reconcile method:
//
//	action, err := r.reconcile(ctx, &cronJob)
//	status.SetError(&cronJob, err)
//	...
//	return reconciler.Result(action, err)
func Result(a Action, err error) (reconcile.Result, error) {
	switch {
	case err != nil && !koperrors.IsTerminal(err):
		delay, ok := koperrors.RetryAfterOf(err)
		if !ok {
			return reconcile.Result{}, err
		}
		if a.requeue && a.after > 0 {
			delay = a.after // asked for with the failure: wins, as in kopgo's loop
		}
		return reconcile.Result{RequeueAfter: delay}, nil
	case err != nil && (!a.requeue || a.after == 0):
		if errors.Is(err, reconcile.TerminalError(nil)) {
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, reconcile.TerminalError(err) // a 422 naming a field, say
	case !a.requeue:
		return reconcile.Result{}, nil
	case a.after > 0:
		return reconcile.Result{RequeueAfter: a.after}, nil
	}
	return reconcile.Result{Requeue: true}, nil //nolint:staticcheck // the one way to requeue through the rate limiter without an error
}

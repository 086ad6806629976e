package status

import (
	koperrors "github.com/kopgo/kopgo/errors"
)

// SetError records in obj's conditions the outcome of reconciling its
// current generation (kuberator's WithStatusError), and reports whether
// obj's status changed:
//
//   - nil: success. Ready=True with reason [ReasonSucceeded], Reconciling
//     and Stalled removed, status.observedGeneration set.
//   - a terminal error ([koperrors.Terminal]): retrying will not help.
//     Stalled=True and Ready=False, Reconciling removed,
//     status.observedGeneration set: this generation was handled, and
//     kstatus reports the object Failed rather than InProgress.
//   - a plain request to come back later ([koperrors.RequeueAfter] with a nil
//     cause): nothing failed. Reconciling=True and Ready=Unknown with reason
//     [ReasonProgressing].
//   - any other error: the controller retries. Ready=False and
//     Reconciling=True, Stalled removed, status.observedGeneration left
//     alone so the generation is not [IsCurrent].
//
// The reason of an error is the name of its [koperrors.Kind] ("NotFound",
// "Invalid", "Unavailable", "Internal", ...), a closed set of valid reasons
// that alerts and `kubectl wait` can match; the message is the error's
// text, which names the operation and the object ("apply Deployment
// default/web: ..."), cut to the API's 32768 bytes. status.observedGeneration is touched only when obj
// implements [ObservedGenerationAccessor].
func SetError(obj Setter, err error) bool {
	switch {
	case err == nil:
		changed := MarkReady(obj, ReasonSucceeded, "")
		return SetObservedGeneration(obj) || changed
	case !koperrors.Failed(err):
		return MarkReconciling(obj, ReasonProgressing, err.Error())
	case koperrors.IsTerminal(err):
		changed := MarkStalled(obj, reasonOf(err), err.Error())
		return SetObservedGeneration(obj) || changed
	default:
		return MarkNotReady(obj, reasonOf(err), err.Error())
	}
}

// reasonOf is the condition reason for err: the name of its
// [koperrors.Kind], which is always a valid reason. It is "" for nil.
func reasonOf(err error) string {
	if err == nil {
		return ""
	}
	return koperrors.KindOf(err).String()
}

package status

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The condition types of kstatus (sigs.k8s.io/cli-utils/pkg/kstatus), which
// Flux, Argo CD and `kubectl wait --for=condition=Ready` understand.
//
// Ready is a "normal-true" condition: True is the good state, and it is
// always present once the controller has looked at the object. Reconciling
// and Stalled are "abnormal-true": True reports a state that needs notice,
// and when that state is over this package removes them rather than setting
// them False (kstatus reads an absent and a False abnormal-true condition
// the same way; removing keeps status short and the order stable).
const (
	// Ready is True when the object's desired state is in effect, False
	// when it is not and the controller knows why, Unknown while it works.
	Ready = "Ready"
	// Reconciling is True while the controller works toward the desired
	// state (including retries after a transient error); absent otherwise.
	Reconciling = "Reconciling"
	// Stalled is True when the controller cannot make progress until
	// something changes (invalid input, a terminal error); absent otherwise.
	Stalled = "Stalled"
)

// ReasonSucceeded is the reason of the Ready=True that [Finish] and
// [SetError] write for a success the reconciler did not describe itself.
// Other reasons come from the caller, or from an error
// (koperrors.ReasonOf: its kind, "NotFound", "Invalid", ..., or a reason
// it was marked with).
const ReasonSucceeded = "Succeeded"

// MarkReady records that the desired state is in effect: Ready=True with
// reason and message, Reconciling and Stalled removed. It reports whether
// obj's conditions changed.
func MarkReady(obj Setter, reason, message string) bool {
	changed := Set(obj, condition(Ready, metav1.ConditionTrue, reason, message))
	changed = Remove(obj, Reconciling) || changed
	return Remove(obj, Stalled) || changed
}

// MarkReconciling records that work toward the desired state is under way:
// Reconciling=True and Ready=Unknown, both with reason and message (Flux's
// convention, so Ready's message always says what is going on), and Stalled
// removed. It reports whether obj's conditions changed.
func MarkReconciling(obj Setter, reason, message string) bool {
	changed := Set(obj, condition(Reconciling, metav1.ConditionTrue, reason, message))
	changed = Set(obj, condition(Ready, metav1.ConditionUnknown, reason, message)) || changed
	return Remove(obj, Stalled) || changed
}

// MarkStalled records that nothing will happen until something changes:
// Stalled=True and Ready=False, both with reason and message, and
// Reconciling removed. It reports whether obj's conditions changed.
func MarkStalled(obj Setter, reason, message string) bool {
	changed := Set(obj, condition(Stalled, metav1.ConditionTrue, reason, message))
	changed = Set(obj, condition(Ready, metav1.ConditionFalse, reason, message)) || changed
	return Remove(obj, Reconciling) || changed
}

// MarkNotReady records a failure the controller will retry: Ready=False
// and Reconciling=True, both with reason and message, and Stalled removed.
// It reports whether obj's conditions changed.
func MarkNotReady(obj Setter, reason, message string) bool {
	changed := Set(obj, condition(Ready, metav1.ConditionFalse, reason, message))
	changed = Set(obj, condition(Reconciling, metav1.ConditionTrue, reason, message)) || changed
	return Remove(obj, Stalled) || changed
}

func condition(t string, s metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: message}
}

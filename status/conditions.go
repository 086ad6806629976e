package status

import (
	"slices"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The condition types of kstatus, which Flux, Argo CD and
// `kubectl wait --for=condition=Ready` understand.
const (
	// Ready is True when the object's desired state is in effect.
	Ready = "Ready"
	// Reconciling is True while the controller works toward the desired
	// state; it is removed when the work is done ("abnormal-true": present
	// only while it holds).
	Reconciling = "Reconciling"
	// Stalled is True when the controller cannot make progress without a
	// change (bad input, a terminal error); removed otherwise.
	Stalled = "Stalled"
)

// Getter is an object that exposes its conditions. A CRD type implements it
// with one line:
//
//	func (w *WebApp) GetConditions() []metav1.Condition { return w.Status.Conditions }
type Getter interface {
	client.Object
	GetConditions() []metav1.Condition
}

// Setter is a [Getter] whose conditions can be replaced:
//
//	func (w *WebApp) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }
type Setter interface {
	Getter
	SetConditions([]metav1.Condition)
}

// ObservedGenerationAccessor is implemented by objects with
// status.observedGeneration. It is optional: [Set] and [IsCurrent] use it when
// it is there.
type ObservedGenerationAccessor interface {
	GetObservedGeneration() int64
	SetObservedGeneration(int64)
}

// Set sets a condition on obj and reports whether anything changed. It
// stamps the condition's observedGeneration with obj's generation, keeps
// lastTransitionTime when the status does not change (apimachinery's
// SetStatusCondition), and keeps conditions in a fixed order: Ready,
// Reconciling, Stalled, then the rest by type, so writes are stable.
func Set(obj Setter, c metav1.Condition) bool {
	c.ObservedGeneration = obj.GetGeneration()
	conds := slices.Clone(obj.GetConditions())
	changed := apimeta.SetStatusCondition(&conds, c)
	sortConditions(conds)
	if changed || !slices.EqualFunc(conds, obj.GetConditions(), func(a, b metav1.Condition) bool { return a.Type == b.Type }) {
		obj.SetConditions(conds)
		return true
	}
	return false
}

// Remove removes the condition of type t and reports whether it was there.
func Remove(obj Setter, t string) bool {
	conds := slices.Clone(obj.GetConditions())
	if !apimeta.RemoveStatusCondition(&conds, t) {
		return false
	}
	obj.SetConditions(conds)
	return true
}

// Get returns the condition of type t, or nil.
func Get(obj Getter, t string) *metav1.Condition {
	return apimeta.FindStatusCondition(obj.GetConditions(), t)
}

// IsTrue reports whether the condition of type t is True for obj's current
// generation: a True condition observed for an older generation is stale.
func IsTrue(obj Getter, t string) bool {
	c := Get(obj, t)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == obj.GetGeneration()
}

// IsReady is IsTrue(obj, Ready).
func IsReady(obj Getter) bool { return IsTrue(obj, Ready) }

// MarkReady sets Ready=True and removes Reconciling and Stalled.
func MarkReady(obj Setter, reason, message string) bool {
	changed := Set(obj, metav1.Condition{Type: Ready, Status: metav1.ConditionTrue, Reason: reason, Message: message})
	changed = Remove(obj, Reconciling) || changed
	return Remove(obj, Stalled) || changed
}

// MarkReconciling sets Reconciling=True and Ready=Unknown (with the same
// reason and message), and removes Stalled: work is under way.
func MarkReconciling(obj Setter, reason, message string) bool {
	changed := Set(obj, metav1.Condition{Type: Reconciling, Status: metav1.ConditionTrue, Reason: reason, Message: message})
	changed = Set(obj, metav1.Condition{Type: Ready, Status: metav1.ConditionUnknown, Reason: reason, Message: message}) || changed
	return Remove(obj, Stalled) || changed
}

// MarkStalled sets Stalled=True and Ready=False (same reason and message),
// and removes Reconciling: nothing will happen until something changes.
func MarkStalled(obj Setter, reason, message string) bool {
	changed := Set(obj, metav1.Condition{Type: Stalled, Status: metav1.ConditionTrue, Reason: reason, Message: message})
	changed = Set(obj, metav1.Condition{Type: Ready, Status: metav1.ConditionFalse, Reason: reason, Message: message}) || changed
	return Remove(obj, Reconciling) || changed
}

// rank orders the kstatus types first.
func rank(t string) int {
	switch t {
	case Ready:
		return 0
	case Reconciling:
		return 1
	case Stalled:
		return 2
	default:
		return 3
	}
}

func sortConditions(conds []metav1.Condition) {
	slices.SortStableFunc(conds, func(a, b metav1.Condition) int {
		if ra, rb := rank(a.Type), rank(b.Type); ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Type, b.Type)
	})
}

func conditionTrue(t, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, Message: msg}
}

func conditionFalse(t, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
}

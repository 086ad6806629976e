package status

import (
	"slices"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/internal/truncate"
)

// maxMessageBytes is the API server's limit on a condition's message
// (metav1.Condition's maxLength). [Set] truncates longer messages.
const maxMessageBytes = 32768

// reasonUnspecified is the reason [Set] writes when a condition has none:
// the API requires a non-empty reason, and a status write the server
// rejects would hide the condition altogether.
const reasonUnspecified = "Unspecified"

// Getter is an object that exposes its conditions. A CRD type implements it
// with one line:
//
//	func (w *WebApp) GetConditions() []metav1.Condition { return w.Status.Conditions }
type Getter interface {
	client.Object
	// GetConditions returns status.conditions. The caller does not modify
	// the slice it gets.
	GetConditions() []metav1.Condition
}

// Setter is a [Getter] whose conditions can be replaced, again in one line:
//
//	func (w *WebApp) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }
type Setter interface {
	Getter
	// SetConditions replaces status.conditions.
	SetConditions([]metav1.Condition)
}

// ObservedGenerationAccessor is implemented by objects with
// status.observedGeneration. It is optional: [IsCurrent],
// [SetObservedGeneration] and [SetError] use it when it is there.
//
//	func (w *WebApp) GetObservedGeneration() int64  { return w.Status.ObservedGeneration }
//	func (w *WebApp) SetObservedGeneration(g int64) { w.Status.ObservedGeneration = g }
type ObservedGenerationAccessor interface {
	GetObservedGeneration() int64
	SetObservedGeneration(int64)
}

// Set sets condition c on obj, replacing the condition of the same type, and
// reports whether obj's conditions changed. It is apimachinery's
// meta.SetStatusCondition plus three rules that make writes stable:
//
//   - c.ObservedGeneration is obj's generation, whatever c says;
//   - lastTransitionTime is kept when the status (True, False, Unknown) does
//     not change, even if the reason or message do, and when [Ready] moves
//     between False and Unknown (see "Since when not Ready" in the package
//     documentation); when it changes otherwise, it is
//     c.LastTransitionTime, or now if that is zero;
//   - conditions are kept in a fixed order ([Ready], [Reconciling],
//     [Stalled], then every other type in byte order), so that an
//     unchanged set of conditions always serializes the same.
//
// An empty reason becomes "Unspecified" and a message longer than the
// API's 32768 bytes is cut at a character boundary and ends with "…": the
// API server would reject either.
func Set(obj Setter, c metav1.Condition) bool {
	c.ObservedGeneration = obj.GetGeneration()
	if c.Reason == "" {
		c.Reason = reasonUnspecified
	}
	c.Message = truncate.String(c.Message, maxMessageBytes)
	old := obj.GetConditions()
	if prev := apimeta.FindStatusCondition(old, c.Type); prev != nil && prev.Status != c.Status && held(c.Type, prev.Status, c.Status) {
		c.LastTransitionTime = prev.LastTransitionTime // Ready: not True before, not True now
	}
	conds := slices.Clone(old)
	changed := apimeta.SetStatusCondition(&conds, c)
	slices.SortStableFunc(conds, compare)
	if changed || !sameOrder(old, conds) {
		obj.SetConditions(conds)
		return true
	}
	return false
}

// held reports whether a condition of type t whose status moves from from
// to to keeps its lastTransitionTime: the same status, or, for [Ready],
// two statuses that are both not True (False and Unknown), so that Ready's
// lastTransitionTime says since when the object has been, or has not been,
// Ready.
func held(t string, from, to metav1.ConditionStatus) bool {
	return from == to || t == Ready && from != metav1.ConditionTrue && to != metav1.ConditionTrue
}

// Remove removes the condition of type t from obj and reports whether it
// was there.
func Remove(obj Setter, t string) bool {
	conds := slices.Clone(obj.GetConditions())
	if !apimeta.RemoveStatusCondition(&conds, t) {
		return false
	}
	obj.SetConditions(conds)
	return true
}

// Get returns obj's condition of type t, or nil. The result points into
// obj's conditions: changing it changes obj.
func Get(obj Getter, t string) *metav1.Condition {
	return apimeta.FindStatusCondition(obj.GetConditions(), t)
}

// IsTrue reports whether obj's condition of type t is True and was observed
// at obj's current generation. A True condition observed for an older
// generation says nothing about the spec as it is now, so it does not count;
// nor does one written without an observedGeneration on an object that has
// a generation.
func IsTrue(obj Getter, t string) bool {
	c := Get(obj, t)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == obj.GetGeneration()
}

func compare(a, b metav1.Condition) int { return compareTypes(a.Type, b.Type) }

// compareTypes orders condition types as [Set] keeps them: [Ready], then
// [Reconciling], then [Stalled], then every other type in byte order.
func compareTypes(a, b string) int {
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	return strings.Compare(a, b)
}

// rank puts the kstatus types first.
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

func sameOrder(a, b []metav1.Condition) bool {
	return slices.EqualFunc(a, b, func(x, y metav1.Condition) bool { return x.Type == y.Type })
}

package reconciler

import (
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// refuse records Sync's refusal of child c, whose name an object with
// controller ctrl (nil: none) holds. The error's chain holds an
// [*apply.TakeoverError], as the Applier's own refusal does, so that one
// errors.As tells a taken name wherever it was met.
func (r *syncRun[T]) refuse(c preparedChild, ctrl *metav1.OwnerReference, message string) {
	terr := &apply.TakeoverError{Controller: ctrl}
	if own := metav1.GetControllerOfNoCopy(c.obj); own != nil {
		terr.Owner = *own
	}
	r.refused.Insert(c.ref)
	r.refusals = append(r.refusals, koperrors.Terminal(&koperrors.Error{Kind: koperrors.Invalid, Err: &refusal{message: message, cause: terr}}))
}

// refusal is Sync's message for a refused child, over the
// [*apply.TakeoverError] that says whose the object is.
type refusal struct {
	message string
	cause   *apply.TakeoverError
}

func (e *refusal) Error() string { return e.message }
func (e *refusal) Unwrap() error { return e.cause }

// heldBack returns, for each refused child that others depend on, the
// terminal error that says they were not written.
func (r *syncRun[T]) heldBack() []error {
	refs := slices.SortedFunc(maps.Keys(r.unwritten), kopmeta.ObjectRef.Compare)
	out := make([]error, 0, len(refs))
	for _, d := range refs {
		names := make([]string, len(r.unwritten[d]))
		for i, c := range r.unwritten[d] {
			names[i] = c.String()
		}
		why := "they depend on " + d.String() + ", which Sync refused"
		if d.Group == "" && d.Kind == "Namespace" {
			why = "they are in namespace " + d.Name + ", which is not this " + r.parentGVK.Kind + "'s: Sync never writes into a namespace it does not own"
		}
		out = append(out, koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "desired children %s not written: %s", strings.Join(names, ", "), why)))
	}
	return out
}

package apply

import (
	stderrors "errors"
	"fmt"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// FieldConflict is one field another field manager owns with a different
// value than the apply asked for.
type FieldConflict struct {
	// Manager is the field manager that owns the field, as "hpa-controller".
	Manager string
	// Field is the field's path as the API server prints it, as
	// ".spec.replicas" or `.spec.template.spec.containers[name="web"].image`.
	Field string
}

// ConflictError is the cause of an apply the API server refused because other
// field managers own some of the fields with other values. It is wrapped in a
// koperrors error of Kind Invalid. It arises only without force (see [Force]):
// retrying the same apply cannot succeed until the other manager lets go;
// apply with Force(true) to take the fields over, or stop setting them.
//
// # Terminal
//
// A conflict is a verdict, as a [*TakeoverError] is: koperrors.IsTerminal
// reports it (through errors.Is(err, reconcile.TerminalError(nil)),
// controller-runtime's own test), status.Finish shows Stalled=True with
// its message (which names each field, its manager, and both ways out),
// reconciler.Result hands it to controller-runtime as terminal, and kopgo's
// loop retries it only on its Stalled interval, or when the object
// changes. The conflict a [*TakeoverError] carries (met by the dry run of
// a refused takeover) does not decide on its own: the TakeoverError does.
type ConflictError struct {
	// Conflicts lists the fields and their owners.
	Conflicts []FieldConflict
	err       error
	// inTakeover: this conflict is the one a TakeoverError carries, whose
	// own Is decides whether the refusal is terminal.
	inTakeover bool
}

// Is reports whether target is controller-runtime's terminal marker
// (reconcile.TerminalError(nil)): a conflict is a verdict (see Terminal
// above), unless it is carried by a [*TakeoverError], which decides.
func (e *ConflictError) Is(target error) bool {
	return !e.inTakeover && stderrors.Is(reconcile.TerminalError(nil), target)
}

// Error renders `fields owned by another field manager: .data.k (owned by
// "other"); force ownership (apply.Force(true) or client.ForceOwnership) to
// take them over, or stop setting them to give them up`.
func (e *ConflictError) Error() string {
	parts := make([]string, len(e.Conflicts))
	for i, c := range e.Conflicts {
		parts[i] = fmt.Sprintf("%s (owned by %q)", c.Field, c.Manager)
	}
	return "fields owned by another field manager: " + strings.Join(parts, ", ") + "; force ownership (apply.Force(true) or client.ForceOwnership) to take them over, or stop setting them to give them up"
}

// Unwrap returns the API server's error (a *apierrors.StatusError, 409).
func (e *ConflictError) Unwrap() error { return e.err }

// Conflicts returns the field conflicts in err's chain, nil when it holds no
// [ConflictError].
func Conflicts(err error) []FieldConflict {
	if ce, ok := stderrors.AsType[*ConflictError](err); ok {
		return ce.Conflicts
	}
	return nil
}

// asConflictError returns a *ConflictError for a 409 with field-manager
// causes, nil for any other error.
func asConflictError(err error) *ConflictError {
	if !apierrors.IsConflict(err) || !apierrors.HasStatusCause(err, metav1.CauseTypeFieldManagerConflict) {
		return nil
	}
	var status apierrors.APIStatus
	if !stderrors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	ce := &ConflictError{err: err}
	for _, cause := range status.Status().Details.Causes {
		if cause.Type == metav1.CauseTypeFieldManagerConflict {
			ce.Conflicts = append(ce.Conflicts, FieldConflict{Manager: managerOf(cause.Message), Field: cause.Field})
		}
	}
	return ce
}

// managerOf reads the manager from a cause message, which the API server
// writes as `conflict with "name"` followed by optional details
// (k8s.io/apimachinery/pkg/util/managedfields/internal.NewConflictError).
func managerOf(message string) string {
	rest, ok := strings.CutPrefix(message, "conflict with ")
	if !ok {
		return message
	}
	quoted, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return rest
	}
	name, err := strconv.Unquote(quoted)
	if err != nil {
		return rest
	}
	return name
}

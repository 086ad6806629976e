package meta

import (
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A ValidationError answers apierrors.IsInvalid.
var _ apierrors.APIStatus = (*ValidationError)(nil)

// ValidationError lists every problem found in the metadata before anything
// was sent to the API server. Each entry names its field path, such as
// metadata.labels["app.kubernetes.io/name"] or metadata.finalizers[0], and
// the offending value. Use errors.As or errors.AsType to get at them:
//
//	if verr, ok := errors.AsType[*kopmeta.ValidationError](err); ok {
//		for _, f := range verr.Fields { ... f.Field, f.BadValue ... }
//	}
//
// It is also an apierrors.APIStatus with reason Invalid, like the API
// server's own 422: apierrors.IsInvalid(err) is true, also through
// wrapping, and kopgo's errors package classifies it as Invalid (the input
// is wrong; retrying it unchanged cannot help).
//
// Map keys in paths are quoted, so a key with spaces or brackets stays
// readable: metadata.labels["bad key"].
type ValidationError struct {
	// Fields are the problems in the order of ObjectMeta's fields: name,
	// generateName, namespace, labels and annotations (by key), finalizers
	// and owner references (by index).
	Fields field.ErrorList
}

// Error renders every problem, separated by "; ".
func (e *ValidationError) Error() string {
	var sb strings.Builder
	sb.WriteString("invalid metadata: ")
	for i, f := range e.Fields {
		if i > 0 {
			sb.WriteString("; ")
		}
		sb.WriteString(f.Error())
	}
	return sb.String()
}

// Status returns the error as the API server words a 422 Invalid: reason
// Invalid, one cause per entry. It makes apierrors.IsInvalid and
// apierrors.ReasonForError work on a ValidationError, also when wrapped. The
// Details name no kind or object: the Builder does not know them.
func (e *ValidationError) Status() metav1.Status {
	causes := make([]metav1.StatusCause, len(e.Fields))
	for i, f := range e.Fields {
		causes[i] = metav1.StatusCause{Type: metav1.CauseType(f.Type), Message: f.ErrorBody(), Field: f.Field}
	}
	return metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnprocessableEntity,
		Reason:  metav1.StatusReasonInvalid,
		Message: e.Error(),
		Details: &metav1.StatusDetails{Causes: causes},
	}
}

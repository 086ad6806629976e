package meta

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidationError lists every problem found in the metadata before anything
// was sent to the API server. Each entry names its field path, such as
// metadata.labels["app.kubernetes.io/name"] or metadata.finalizers[0], and
// the offending value. Use errors.As or errors.AsType to get at the
// entries:
//
//	if verr, ok := errors.AsType[*kopmeta.ValidationError](err); ok {
//		for _, f := range verr.Fields { ... f.Field, f.BadValue ... }
//	}
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

// Unwrap returns the entries, each a *field.Error, so that errors.As can
// reach the first one directly.
func (e *ValidationError) Unwrap() []error {
	errs := make([]error, len(e.Fields))
	for i, f := range e.Fields {
		errs[i] = f
	}
	return errs
}

package errors

import (
	"fmt"

	kopmeta "github.com/kopgo/kopgo/meta"
)

// Error is kopgo's error: what went wrong (Kind), during which operation
// (Op), on which object (Object), and why (Err, reachable with Unwrap).
type Error struct {
	// Kind classifies the error. [KindOf] reports it for any error chain.
	Kind Kind
	// Op is the operation, lower case, such as "apply" or "remove finalizer".
	Op string
	// Object is the object concerned; its zero value means none.
	Object kopmeta.ObjectRef
	// Err is the cause.
	Err error
}

// Error renders "op Kind ns/name: cause", such as
// "apply Deployment default/web: <cause>", leaving out the parts that are
// empty. With no cause it renders the rest, or the Kind's name alone.
func (e *Error) Error() string {
	prefix := e.Op
	if obj := e.Object.String(); obj != "" {
		if prefix != "" {
			prefix += " "
		}
		prefix += obj
	}
	switch {
	case e.Err == nil && prefix == "":
		return e.Kind.String()
	case e.Err == nil:
		return prefix
	case prefix == "":
		return e.Err.Error()
	default:
		return prefix + ": " + e.Err.Error()
	}
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Wrap returns err as an [*Error] for operation op on obj, with the Kind
// classified from err by [KindOf]. Wrap(nil, ...) is nil. Op is a lower-case
// verb phrase ("apply", "remove finalizer"); obj may be the zero ObjectRef
// (kopmeta.RefOf(o) names an object o).
func Wrap(err error, op string, obj kopmeta.ObjectRef) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: KindOf(err), Op: op, Object: obj, Err: err}
}

// WrapKind is [Wrap] with an explicit kind. WrapKind(k, nil, ...) is nil.
func WrapKind(kind Kind, err error, op string, obj kopmeta.ObjectRef) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: kind, Op: op, Object: obj, Err: err}
}

// Errorf returns a new [*Error] of the given kind with a message formatted
// as by fmt.Errorf (so %w wraps a cause). The explicit kind wins over the
// cause's.
func Errorf(kind Kind, format string, args ...any) error {
	return &Error{Kind: kind, Err: fmt.Errorf(format, args...)}
}

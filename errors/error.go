package errors

import (
	stderrors "errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Error is kopgo's error: what went wrong (Kind), during which operation
// (Op), on which object (Object), and why (Err, reachable with Unwrap).
type Error struct {
	// Kind classifies the error. [KindOf] reports it for any error chain.
	Kind Kind
	// Op is the operation, lower case, such as "apply" or "remove finalizer".
	Op string
	// Object is the object concerned; its zero value means none.
	Object Object
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

// Object names the object an error concerns.
type Object struct {
	// GroupVersionKind of the object; Version may be empty.
	schema.GroupVersionKind
	// Namespace is empty for cluster-scoped objects.
	Namespace string
	// Name of the object; empty when the object had none (a bad input).
	Name string
}

// String renders "Deployment default/web", "Namespace web", or "" for the
// zero Object. The kind is the bare Kind; [Object.GroupVersionKind] has the rest.
func (o Object) String() string {
	key := o.Name
	if o.Namespace != "" {
		key = o.Namespace + "/" + o.Name
	}
	switch {
	case o.Kind == "" && key == "":
		return ""
	case o.Kind == "":
		return key
	case key == "":
		return o.Kind
	default:
		return o.Kind + " " + key
	}
}

// ObjectOf describes obj: its GroupVersionKind from TypeMeta when set,
// otherwise the Kind from its Go type name (typed objects fetched through a
// client usually have empty TypeMeta). It needs no scheme.
func ObjectOf(obj client.Object) Object {
	if isNil(obj) {
		return Object{}
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		t := reflect.TypeOf(obj)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		gvk.Kind = t.Name()
	}
	return Object{GroupVersionKind: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// isNil reports whether obj is nil or a nil pointer (or map) in an interface.
func isNil(obj client.Object) bool {
	if obj == nil {
		return true
	}
	switch v := reflect.ValueOf(obj); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// Wrap returns err as an [*Error] for operation op on obj, with the Kind
// classified from err by [KindOf]. Wrap(nil, ...) is nil. Op is a lower-case
// verb phrase ("apply", "remove finalizer"); obj may be the zero Object.
func Wrap(err error, op string, obj Object) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: KindOf(err), Op: op, Object: obj, Err: err}
}

// WrapKind is [Wrap] with an explicit kind. WrapKind(k, nil, ...) is nil.
func WrapKind(kind Kind, err error, op string, obj Object) error {
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

// The standard library's errors API, so that this package can replace the
// "errors" import.
var (
	// ErrUnsupported is [errors.ErrUnsupported].
	ErrUnsupported = stderrors.ErrUnsupported
)

// New is [errors.New].
func New(text string) error { return stderrors.New(text) }

// Is is [errors.Is].
func Is(err, target error) bool { return stderrors.Is(err, target) }

// As is [errors.As].
func As(err error, target any) bool { return stderrors.As(err, target) }

// AsType is [errors.AsType].
func AsType[E error](err error) (E, bool) { return stderrors.AsType[E](err) }

// Unwrap is [errors.Unwrap].
func Unwrap(err error) error { return stderrors.Unwrap(err) }

// Join is [errors.Join].
func Join(errs ...error) error { return stderrors.Join(errs...) }

package errors

import stderrors "errors"

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

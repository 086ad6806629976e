package errors

import (
	"context"
	"encoding/json"
	stderrors "errors"
	"io"
	"io/fs"
	"net"
	"slices"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// classifier maps errors that a test recognises to a Kind. KindOf tries
// them in order, after the Kind of an [*Error] in the chain.
type classifier struct {
	kind Kind
	is   func(error) bool
}

// classifiers is the whole mapping, in the order it is tried.
var classifiers = []classifier{
	// Errors from the API server (a *StatusError anywhere in the chain).
	{NotFound, anyOf(apierrors.IsNotFound, apierrors.IsGone, apierrors.IsResourceExpired)},
	{Conflict, anyOf(apierrors.IsConflict, apierrors.IsAlreadyExists)},
	{Forbidden, anyOf(apierrors.IsForbidden, apierrors.IsUnauthorized)},
	{Invalid, anyOf(apierrors.IsInvalid, apierrors.IsBadRequest, apierrors.IsMethodNotSupported,
		apierrors.IsNotAcceptable, apierrors.IsUnsupportedMediaType, apierrors.IsRequestEntityTooLargeError)},
	{Timeout, anyOf(apierrors.IsTimeout, apierrors.IsServerTimeout)},
	// A 500 from the API server is most often etcd or a webhook failing for a
	// moment: retry it like a 503.
	{Unavailable, anyOf(apierrors.IsServiceUnavailable, apierrors.IsTooManyRequests,
		apierrors.IsInternalError, apierrors.IsUnexpectedServerError)},
	// A kind or resource the API server does not serve: the caller's input.
	{Invalid, apimeta.IsNoMatchError},
	// Deadlines, local and on the network.
	{Timeout, isTimeout},
	// Configuration.
	{Config, anyOf(is(rest.ErrNotInCluster), inChain(clientcmd.IsEmptyConfig), inChain(clientcmd.IsConfigurationInvalid))},
	// Encoding.
	{Serialization, isSerialization},
	// Local files, before network errors: both can wrap a syscall error.
	{IO, isFile},
	{Unavailable, isConnection},
}

// KindOf classifies err: the Kind of the first [*Error] in its chain, or else
// the first match of this table, or [Internal]:
//
//	NotFound       API 404 NotFound, 410 Gone and Expired
//	Conflict       API 409 Conflict and AlreadyExists
//	Forbidden      API 403 Forbidden and 401 Unauthorized
//	Invalid        API 422 Invalid, 400, 405, 406, 413, 415; a kind the server does not serve
//	Timeout        API 504 and server timeouts; context.DeadlineExceeded; net.Error timeouts
//	Unavailable    API 503, 429, 500; connection refused, reset, broken pipe, unexpected EOF
//	Config         rest.ErrNotInCluster; empty or invalid kubeconfig
//	Serialization  JSON syntax and type errors; kinds missing from a scheme
//	IO             *fs.PathError (os.Open and friends)
//
// context.Canceled is Internal: it means the caller gave up, which says
// nothing about the operation.
func KindOf(err error) Kind {
	if err == nil {
		return Internal
	}
	if e, ok := stderrors.AsType[*Error](err); ok {
		return e.Kind
	}
	for _, c := range classifiers {
		if c.is(err) {
			return c.kind
		}
	}
	return Internal
}

func anyOf(tests ...func(error) bool) func(error) bool {
	return func(err error) bool {
		for _, t := range tests {
			if t(err) {
				return true
			}
		}
		return false
	}
}

// inChain applies test to err and to every error it wraps (through Unwrap
// and Join), for tests that only look at the error they are given.
func inChain(test func(error) bool) func(error) bool {
	var walk func(error) bool
	walk = func(err error) bool {
		if err == nil {
			return false
		}
		if test(err) {
			return true
		}
		switch u := err.(type) { //nolint:errorlint // walking the chain by hand is the point
		case interface{ Unwrap() error }:
			return walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			return slices.ContainsFunc(u.Unwrap(), walk)
		}
		return false
	}
	return walk
}

func is(target error) func(error) bool {
	return func(err error) bool { return stderrors.Is(err, target) }
}

func isTimeout(err error) bool {
	if stderrors.Is(err, context.DeadlineExceeded) {
		return true
	}
	ne, ok := stderrors.AsType[net.Error](err)
	return ok && ne.Timeout()
}

func isSerialization(err error) bool {
	if _, ok := stderrors.AsType[*json.SyntaxError](err); ok {
		return true
	}
	if _, ok := stderrors.AsType[*json.UnmarshalTypeError](err); ok {
		return true
	}
	if _, ok := stderrors.AsType[*json.UnsupportedTypeError](err); ok {
		return true
	}
	if _, ok := stderrors.AsType[*json.MarshalerError](err); ok {
		return true
	}
	// These apimachinery tests look at err itself, not at what it wraps.
	return inChain(anyOf(runtime.IsNotRegisteredError, runtime.IsMissingKind, runtime.IsMissingVersion,
		runtime.IsStrictDecodingError))(err)
}

func isFile(err error) bool {
	_, ok := stderrors.AsType[*fs.PathError](err)
	return ok
}

func isConnection(err error) bool {
	for _, target := range []error{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
		syscall.EHOSTUNREACH, syscall.ENETUNREACH, io.ErrUnexpectedEOF} {
		if stderrors.Is(err, target) {
			return true
		}
	}
	_, ok := stderrors.AsType[*net.OpError](err)
	return ok
}

// IsNotFound reports whether err is of Kind [NotFound].
func IsNotFound(err error) bool { return err != nil && KindOf(err) == NotFound }

// IsConflict reports whether err is of Kind [Conflict].
func IsConflict(err error) bool { return err != nil && KindOf(err) == Conflict }

// IsForbidden reports whether err is of Kind [Forbidden].
func IsForbidden(err error) bool { return err != nil && KindOf(err) == Forbidden }

// IsInvalid reports whether err is of Kind [Invalid].
func IsInvalid(err error) bool { return err != nil && KindOf(err) == Invalid }

// IsTimeout reports whether err is of Kind [Timeout].
func IsTimeout(err error) bool { return err != nil && KindOf(err) == Timeout }

// IsUnavailable reports whether err is of Kind [Unavailable].
func IsUnavailable(err error) bool { return err != nil && KindOf(err) == Unavailable }

// IsSerialization reports whether err is of Kind [Serialization].
func IsSerialization(err error) bool { return err != nil && KindOf(err) == Serialization }

// IsIO reports whether err is of Kind [IO].
func IsIO(err error) bool { return err != nil && KindOf(err) == IO }

// IsConfig reports whether err is of Kind [Config].
func IsConfig(err error) bool { return err != nil && KindOf(err) == Config }

// IsInternal reports whether err is non-nil and of Kind [Internal].
func IsInternal(err error) bool { return err != nil && KindOf(err) == Internal }

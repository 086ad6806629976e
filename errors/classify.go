package errors

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	stderrors "errors"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"slices"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	kjson "sigs.k8s.io/json"
)

// classifier maps the errors that a test recognises to a Kind.
type classifier struct {
	kind Kind
	is   func(error) bool
}

// classifiers is the whole mapping, tried in order after the Kind of an
// [*Error] in the chain; the first match wins. The package documentation
// (section Kinds) shows it as a table: keep the two in step.
var classifiers = []classifier{
	// Errors from the API server: a *StatusError anywhere in the chain (the
	// apierrors tests see through wrapping).
	//
	// A server-side apply conflict with another field manager is a 409, but
	// re-reading and retrying cannot fix it (Force or a change of intent
	// can), so it is Invalid; it must be tried before Conflict.
	{Invalid, isFieldManagerConflict},
	{NotFound, apierrors.IsNotFound},
	// Only an optimistic-lock failure is a Conflict: the reconcile loop
	// retries those promptly. AlreadyExists and Gone/Expired share the 409
	// and 410 codes but not the remedy, so they are kinds of their own and
	// take the normal failure path.
	{AlreadyExists, apierrors.IsAlreadyExists},
	{Expired, anyOf(apierrors.IsGone, apierrors.IsResourceExpired)},
	{Conflict, apierrors.IsConflict},
	{Forbidden, anyOf(apierrors.IsForbidden, apierrors.IsUnauthorized)},
	{Invalid, anyOf(apierrors.IsInvalid, apierrors.IsBadRequest, apierrors.IsMethodNotSupported,
		apierrors.IsNotAcceptable, apierrors.IsUnsupportedMediaType, apierrors.IsRequestEntityTooLargeError)},
	{Timeout, anyOf(apierrors.IsTimeout, apierrors.IsServerTimeout)},
	// A 500 from the API server is most often etcd or an admission webhook
	// failing for a moment: retry it like a 503.
	{Unavailable, anyOf(apierrors.IsServiceUnavailable, apierrors.IsTooManyRequests,
		apierrors.IsInternalError, apierrors.IsUnexpectedServerError)},
	// The server could not decode what it stored (or decrypt it).
	{Serialization, apierrors.IsStoreReadError},

	// A kind or resource the API server does not serve, or serves ambiguously:
	// the caller's input.
	{Invalid, anyOf(apimeta.IsNoMatchError, apimeta.IsAmbiguousError)},
	// Deadlines, local and on the network.
	{Timeout, isTimeout},
	// The program's own configuration, including a CA bundle or server name
	// that does not match the API server's certificate.
	{Config, anyOf(is(rest.ErrNotInCluster), is(clientcmd.ErrEmptyCluster),
		inChain(anyOf(clientcmd.IsEmptyConfig, clientcmd.IsConfigurationInvalid)), isCertificate)},
	// Encoding and decoding.
	{Serialization, isSerialization},
	// Local files, before network errors: both can wrap a syscall error.
	{IO, isFile},
	{Unavailable, isConnection},
}

// KindOf returns the Kind of err: the Kind of the first [*Error] in its chain
// (so an explicit Kind always wins), or else the first match in the table of
// the package documentation (section Kinds), or else [Internal].
// KindOf(nil) is Internal; test for nil first.
//
// The [Terminal] marker is transparent: KindOf reports the Kind of what it
// marks.
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
// and Join), for tests that only look at the error they are given, such as
// runtime.IsNotRegisteredError and clientcmd.IsEmptyConfig.
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

// has reports whether err's chain holds an error of type E.
func has[E error](err error) bool {
	_, ok := stderrors.AsType[E](err)
	return ok
}

func isFieldManagerConflict(err error) bool {
	return apierrors.IsConflict(err) && apierrors.HasStatusCause(err, metav1.CauseTypeFieldManagerConflict)
}

// isTimeout is context.DeadlineExceeded or any error in the chain whose
// Timeout method says so: net.Error, *url.Error, os.ErrDeadlineExceeded,
// syscall.ETIMEDOUT.
func isTimeout(err error) bool {
	if stderrors.Is(err, context.DeadlineExceeded) {
		return true
	}
	return inChain(func(err error) bool {
		t, ok := err.(interface{ Timeout() bool })
		return ok && t.Timeout()
	})(err)
}

func isCertificate(err error) bool {
	return has[*tls.CertificateVerificationError](err) || has[x509.UnknownAuthorityError](err) ||
		has[x509.CertificateInvalidError](err) || has[x509.HostnameError](err)
}

func isSerialization(err error) bool {
	if has[*json.SyntaxError](err) || has[*json.UnmarshalTypeError](err) ||
		has[*json.UnsupportedTypeError](err) || has[*json.UnsupportedValueError](err) ||
		has[*json.MarshalerError](err) {
		return true
	}
	// These tests look at the error they are given, not at what it wraps.
	// sigs.k8s.io/json (apimachinery's decoder) has its own SyntaxError type.
	return inChain(anyOf(
		func(err error) bool { ok, _ := kjson.SyntaxErrorOffset(err); return ok },
		runtime.IsNotRegisteredError, runtime.IsMissingKind, runtime.IsMissingVersion,
		runtime.IsStrictDecodingError))(err)
}

func isFile(err error) bool {
	return has[*fs.PathError](err) || has[*os.LinkError](err)
}

// connectionErrors are refused, cut or unreachable connections.
// io.ErrUnexpectedEOF is among them because client-go reports a response
// body cut short by a dropped connection with no network error type around
// it.
var connectionErrors = []error{
	syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
	syscall.EHOSTUNREACH, syscall.ENETUNREACH, net.ErrClosed, io.ErrUnexpectedEOF,
}

func isConnection(err error) bool {
	for _, target := range connectionErrors {
		if stderrors.Is(err, target) {
			return true
		}
	}
	if has[*net.OpError](err) || has[*net.DNSError](err) {
		return true
	}
	// "Get https://...: EOF": the server closed the connection before
	// answering, as an API server does while it restarts.
	return has[*url.Error](err) && stderrors.Is(err, io.EOF)
}

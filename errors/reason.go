package errors

import (
	stderrors "errors"
	"regexp"
	"time"
)

// maxReasonLength is the longest reason a metav1.Condition accepts.
const maxReasonLength = 1024

// reasonPattern is the pattern metav1.Condition's reason must match.
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// validReason reports whether r is a valid condition reason that starts
// with a capital letter (kopgo's reasons are CamelCase).
func validReason(r string) bool {
	return len(r) <= maxReasonLength && r != "" && r[0] >= 'A' && r[0] <= 'Z' && reasonPattern.MatchString(r)
}

// reasoner is an error that carries a condition reason: a [WithReason]
// mark, or an error from [FromHTTP]. An empty reason stands for the Kind.
type reasoner interface {
	error
	conditionReason() string
}

// delayer is an error that carries how long to wait before retrying: an
// error from [FromHTTP] with a Retry-After header, or a [WithRetryAfter]
// mark.
type delayer interface {
	error
	retryAfter() time.Duration
}

// reasonError marks err with a condition reason. It adds nothing to the
// message.
type reasonError struct {
	err    error
	reason string // "": the reason asked for was invalid; the Kind stands in
}

func (r *reasonError) Error() string           { return r.err.Error() }
func (r *reasonError) Unwrap() error           { return r.err }
func (r *reasonError) conditionReason() string { return r.reason }

// WithReason marks err with reason, the condition reason that kopgo's loop
// and status.Finish write for it (Ready, Reconciling or Stalled) and the
// reason of the loop's Warning event, in place of the error's Kind. Use it
// when the Kind is too coarse for the person reading the object, such as
// "QuotaExceeded" for an Invalid error from a provider.
//
// reason must be a valid metav1.Condition reason that starts with a capital
// letter (CamelCase: letters, digits, '_', ',' and ':', at most 1024 bytes,
// ending in a letter, digit or '_'); an invalid one is replaced by the name
// of err's Kind, so that the condition can still be written. WithReason
// never panics.
//
// The mark adds nothing to the message and keeps everything else:
// errors.Is, errors.As, [KindOf], [IsTerminal] and [RetryAfterOf] see
// through it, and it survives wrapping with %w, errors.Join, [Terminal]
// and [Wrap]. WithReason(nil, ...) is nil.
func WithReason(err error, reason string) error {
	if err == nil {
		return nil
	}
	if !validReason(reason) {
		reason = ""
	}
	return &reasonError{err: err, reason: reason}
}

// delayError marks err with a delay before it is worth retrying.
type delayError struct {
	err   error
	delay time.Duration
}

func (d *delayError) Error() string             { return d.err.Error() }
func (d *delayError) Unwrap() error             { return d.err }
func (d *delayError) retryAfter() time.Duration { return d.delay }

// WithRetryAfter marks err with the delay the system that refused asked
// for: what [FromHTTP] takes from an HTTP Retry-After header, for a client
// that is not net/http (a gRPC status with RetryInfo, a cloud SDK's
// throttling error). [RetryAfterOf] returns it, and kopgo's loop retries
// no sooner, against every wake-up of the object.
//
//	var throttled *sdk.ThrottlingError // your SDK's error type
//	if errors.As(err, &throttled) {
//		return reconciler.Done(), koperrors.WithRetryAfter(koperrors.WrapKind(koperrors.Unavailable, err, "create", ref), throttled.RetryAfter)
//	}
//
// A delay of more than an hour is an hour, as for FromHTTP. The mark adds
// nothing to the message and keeps everything else ([KindOf],
// [IsTerminal], [ReasonOf], errors.Is and errors.As see through it); the
// outermost delay in the chain wins. WithRetryAfter(nil, d) is nil, and
// WithRetryAfter(err, d) with d <= 0 is err.
func WithRetryAfter(err error, d time.Duration) error {
	if err == nil || d <= 0 {
		return err
	}
	return &delayError{err: err, delay: min(d, maxRetryAfter)}
}

// ReasonOf returns the condition reason for err: the reason of the
// outermost [WithReason] mark in its chain (through %w, errors.Join and
// kopgo's markers), or the one [FromHTTP] set (such as "Unauthorized"),
// or else the name of its Kind ([KindOf]). It is always a valid
// metav1.Condition reason, and "" for nil.
//
// The set of reasons is open; the metrics' error_kind label stays the
// Kind, a closed set.
func ReasonOf(err error) string {
	if err == nil {
		return ""
	}
	if r, ok := stderrors.AsType[reasoner](err); ok && r.conditionReason() != "" {
		return r.conditionReason()
	}
	return KindOf(err).String()
}

// RetryAfterOf returns the delay err carries before it is worth retrying:
// the Retry-After of an HTTP response turned into an error by [FromHTTP]
// (at most an hour), found through %w, errors.Join and kopgo's markers.
// ok is false when err carries none, or one that has already passed.
//
// kopgo's loop retries such a failure no sooner than this delay, unless
// the reconciler returned a delay of its own with it; reconciler.Result
// does the same for a plain controller-runtime reconciler.
func RetryAfterOf(err error) (time.Duration, bool) {
	if err == nil {
		return 0, false
	}
	d, ok := stderrors.AsType[delayer](err)
	if !ok || d.retryAfter() <= 0 {
		return 0, false
	}
	return d.retryAfter(), true
}

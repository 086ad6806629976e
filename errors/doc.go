// Package errors is kopgo's error type: one error that says what went wrong
// (a [Kind] from a closed set), during which operation, on which object, and
// why (the cause, through Unwrap). It also carries the marks the reconcile
// loop understands: [Terminal], a condition reason ([WithReason]) and a
// delay before the retry ([RetryAfterOf]).
//
// Import it as koperrors; kopgo's own code does:
//
//	import koperrors "github.com/kopgo/kopgo/errors"
//
// It sits beside the standard library's errors package, not in its place:
// errors.Is, errors.As and errors.Join work on its errors as on any other.
//
// # Naming the object
//
// [Wrap] turns a cause into an [*Error] for an operation on an object, and
// classifies it; [WrapKind] and [Errorf] take an explicit Kind instead.
// The object is a kopmeta.ObjectRef (package github.com/kopgo/kopgo/meta,
// kopgo's one identity type); kopmeta.RefOf names a client.Object without a
// scheme: its kind from TypeMeta when set, otherwise its Go type name.
//
//	return koperrors.Wrap(err, "apply", kopmeta.RefOf(deploy))
//	// apply Deployment default/web: <cause>
//
// Wrapping nil returns nil, so the result of a call can be wrapped unchecked.
//
// # Kinds
//
// [KindOf] returns the Kind of an [*Error] in the chain, or else classifies
// the chain with the table below, top to bottom, first match wins; anything
// else is [Internal]. Each row looks through wrapping with %w, errors.Join
// and kopgo's markers. There is one way to ask: KindOf(err) == X (no IsX
// helper per kind to keep in step with the table).
//
//	Invalid        409 with FieldManagerConflict causes (server-side apply: Force or change intent)
//	NotFound       404 NotFound
//	AlreadyExists  409 AlreadyExists
//	Expired        410 Gone, 410 Expired
//	Conflict       409 Conflict (a stale resourceVersion)
//	Forbidden      403 Forbidden, 401 Unauthorized
//	Invalid        422 Invalid, 400 BadRequest, 405, 406, 413, 415
//	Timeout        504 Timeout, ServerTimeout
//	Unavailable    503, 429 TooManyRequests, 500 InternalError, unexpected server responses
//	Serialization  StorageReadError (the server cannot decode what it stored)
//	Invalid        meta.NoKindMatchError, NoResourceMatchError, ambiguous kinds or resources
//	Timeout        context.DeadlineExceeded; any error whose Timeout() is true (net.Error, *url.Error)
//	Config         rest.ErrNotInCluster; clientcmd empty, invalid or context-less kubeconfig;
//	               TLS certificate verification (unknown authority, wrong host name)
//	Serialization  encoding/json and sigs.k8s.io/json errors; runtime not-registered,
//	               missing kind or version, strict decoding errors
//	IO             *fs.PathError, *os.LinkError
//	Unavailable    ECONNREFUSED, ECONNRESET, ECONNABORTED, EPIPE, EHOSTUNREACH, ENETUNREACH,
//	               net.ErrClosed, io.ErrUnexpectedEOF, *net.OpError, *net.DNSError,
//	               io.EOF inside a *url.Error
//
// Four choices deserve a reason. Only an optimistic-lock 409 is Conflict,
// because the reconcile loop retries Conflict promptly and quietly: a 409
// AlreadyExists does not go away by reading again (someone else's object
// holds the name), so it is its own kind and takes the normal failure path
// with backoff. 410 Gone and Expired are Expired, not NotFound: the server
// says the caller's resourceVersion is too old (list again), while NotFound
// would tell a caller that the object does not exist. A 500 InternalError is Unavailable: it is
// most often etcd or an admission webhook failing for a moment. A
// field-manager conflict is Invalid: retrying the same apply cannot succeed,
// so a loop that requeues conflicts silently must not see it as Conflict.
// context.Canceled is Internal: it says the caller gave up, nothing about
// the operation.
//
// The set of kinds is closed, so [Kind.String] is safe as a Prometheus label
// value; [Kinds] lists them for pre-registration.
//
//	if err := c.Get(ctx, key, &cm); koperrors.KindOf(err) == koperrors.NotFound { ... }
//
// # Failures, verdicts and schedules
//
// An error is always a failure. When to come back is not an error: a
// reconciler returns it as a value beside the error (reconciler.Action in
// kopgo's loop, ctrl.Result in a plain controller-runtime reconciler), so
// a schedule-driven controller says "requeue after 1h" without failing.
//
// [Terminal] marks a verdict about the spec that retrying cannot change:
// the loop reports the object Stalled=True and stops retrying it with
// backoff. [IsTerminal] recognises the marker and the API server's own
// verdicts about a request's content (a 422 naming fields, a 400). It keeps
// the cause reachable and leaves the message alone, so KindOf, errors.Is and
// errors.As work on a marked error as on the cause. A reconcile loop tells
// the failures apart in this order:
//
//	koperrors.IsTerminal(err)                   log, set Stalled, retry only on change (or after a long interval)
//	koperrors.KindOf(err) == koperrors.Conflict requeue at once, quietly
//	otherwise                                   log, retry with backoff
//
// For example:
//
//	if spec.Port > 65535 {
//		return koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "spec.port %d: must be at most 65535", spec.Port))
//	}
//
// # Reasons
//
// The Ready, Reconciling and Stalled conditions that kopgo's loop and
// status.Finish write for a failure, and the loop's Warning event, carry
// [ReasonOf](err) as reason: the name of the error's Kind ("NotFound",
// "Invalid", ...), unless the error was marked with a reason of its own
// by [WithReason] (the outermost mark wins) or came from [FromHTTP]
// ("Unauthorized" for a 401). A reason is CamelCase and valid for a
// metav1.Condition; WithReason replaces an invalid one by the Kind's name.
// Like [Terminal], the mark keeps the message and the cause, and survives
// %w, errors.Join and [Wrap]. The metrics' error_kind label stays the Kind,
// a closed set.
//
//	return koperrors.Terminal(koperrors.WithReason(err, "QuotaExceeded"))
//
// # Errors from other HTTP APIs
//
// [FromHTTP] turns a failed response of a system outside Kubernetes (a
// cloud provider, a DNS service) into an [*Error] with a Kind from its
// status, a message that names the host, method, path and status, and the
// response's Retry-After as its delay, which [RetryAfterOf] reports. In
// short: 401 and 403 are Forbidden and terminal, but a 403 with
// Retry-After (a quota) is Unavailable; 404 and 410 NotFound; a 409 to a
// POST AlreadyExists; any other 409 and a 412 (a stale ETag) Conflict,
// retried at once, and either with Retry-After Unavailable; 408 and 504
// Timeout; 425, 429 and other 5xx Unavailable; other 4xx Invalid and
// terminal. A redirect is not a success: one that reached the caller (a
// 3xx net/http's Client did not follow), and a 301 or 302 after which the
// Client sent the caller's write again as a GET, are Invalid and terminal
// with reason "Redirected", naming the Location; a 304 is a success only
// for a conditional request. The full table, with the reasons, the delays
// and why each row is what it is, is on [FromHTTP]. kopgo's loop retries
// such a failure no sooner than its delay, unless the reconciler returned
// a delay of its own with it (reconciler.RequeueAfter(d), err):
//
//	resp, err := c.http.Do(req)
//	if err != nil {
//		return koperrors.Wrap(err, "create record", kopmeta.RefOf(rec))
//	}
//	defer resp.Body.Close()
//	if err := koperrors.FromHTTP(resp); err != nil {
//		return err // 429 with Retry-After: 30: Reconciling, retried in 30 s
//	}
//
// A client that is not net/http (gRPC, a cloud SDK) marks its own error
// with the delay it was told: [WithRetryAfter].
package errors

package errors

import (
	stderrors "errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The bounds of what FromHTTP takes from a response.
const (
	// maxBody is how much of a response body FromHTTP reads for its message.
	maxBody = 512
	// maxRetryAfter caps a Retry-After: a server asking for more is retried
	// after an hour all the same.
	maxRetryAfter = time.Hour
)

// httpError is a failed HTTP response as [FromHTTP] describes it.
type httpError struct {
	msg    string
	reason string        // condition reason; "": the Kind
	delay  time.Duration // Retry-After; 0: none
}

func (h *httpError) Error() string             { return h.msg }
func (h *httpError) conditionReason() string   { return h.reason }
func (h *httpError) retryAfter() time.Duration { return h.delay }

// FromHTTP turns a failed HTTP response from a system outside Kubernetes
// (a cloud provider's or a DNS service's API) into an [*Error], so that
// kopgo's loop and status.Finish treat it as they treat the API server's
// errors. It returns nil for a success: a status 1xx or 2xx, and a 304 Not
// Modified to a conditional request (see below), unless the answer is to
// a GET that net/http's Client sent in place of the caller's write.
//
// # The table
//
// The Kind follows the status (and, for some, the request's method and
// the response's Retry-After); some statuses are [Terminal] (a verdict
// that retrying the same request cannot change). "RA" is a Retry-After
// header that parses (delta-seconds or an HTTP-date; 0 and a date in the
// past count, as a delay of 0). The first row that matches, top to
// bottom, applies:
//
//	status                         Kind           terminal  reason ([ReasonOf])  delay
//	a write re-sent as a GET       Invalid        yes       Redirected           none
//	1xx, 2xx                       nil
//	304 to a conditional request   nil
//	304 otherwise                  Invalid        yes       Invalid              RA
//	other 3xx                      Invalid        yes       Redirected           RA
//	401                            Forbidden      yes       Unauthorized         RA
//	403 with RA                    Unavailable    no        Unavailable          RA
//	403                            Forbidden      yes       Forbidden            none
//	404, 410                       NotFound       no        NotFound             RA
//	408                            Timeout        no        Timeout              RA
//	409, 412 with RA               Unavailable    no        Unavailable          RA
//	409 to a POST                  AlreadyExists  no        AlreadyExists        none
//	409, 412 otherwise             Conflict       no        Conflict             none
//	425, 429                       Unavailable    no        Unavailable          RA
//	other 4xx (400, 405, 422, ...) Invalid        yes       Invalid              RA
//	504                            Timeout        no        Timeout              RA
//	other 5xx (500, 502, 503, ...) Unavailable    no        Unavailable          RA
//	anything else                  Internal       no        Internal             RA
//
// "A write re-sent as a GET" is an answer, of any status, to the GET that
// net/http's Client sent in place of a POST, PUT, PATCH or DELETE after a
// 301 or 302; "a conditional request" is one that sent If-None-Match or
// If-Modified-Since, or an unknown one (resp.Request nil).
//
// The delay, which [RetryAfterOf] reports, is the Retry-After on whatever
// status it comes with, at most an hour, and none without one. kopgo's
// loop retries the failure no sooner, whatever wakes the object; a
// terminal failure is looked at again no sooner than the delay either.
// A Retry-After that does not parse is ignored. An HTTP-date is measured
// from the response's Date header, else from the local clock.
//
// # Why these rows
//
// A 3xx that reaches the caller is a redirect the client did not follow:
// net/http's Client follows 301, 302, 303, 307 and 308 itself, so the
// caller sees one only when its CheckRedirect returned
// http.ErrUseLastResponse, when a 307 or 308 would have to send again a
// body the request cannot replay (no GetBody), for a 300, or for a
// redirect without a Location. The request was not carried out, and
// asking again gets the same answer until the endpoint is fixed (an
// http:// URL the system moves to https://, an API version it moved), so
// it is terminal, and the message names the Location (scheme, host and
// path; no credentials, query or fragment). The Client does follow a 301
// or 302 to a POST, PUT, PATCH or DELETE, but as a GET without the body
// (as browsers do): whatever the answer to that GET, the write was never
// carried out, so FromHTTP reports the redirect the same way, found
// through resp.Request.Response ("redirect to ... followed as a GET: the
// POST was not carried out"). A 303 See Other to a write is followed as a
// GET by design (it points at the write's result) and is a success.
//
// A 304 answers a conditional GET: "your copy is current". net/http's
// Client never makes a request conditional by itself, so a 304 is the
// answer to the caller's own If-None-Match or If-Modified-Since, and a
// success (check resp.StatusCode for it: there is no body). A 304 to a
// request without those headers is a server that broke the protocol:
// Invalid, terminal.
//
// A 409 to a create (POST) is a resource of the same name that already
// exists, which asking again does not change: AlreadyExists, retried with
// backoff. A 409 to anything else (PUT, PATCH, DELETE) and a 412
// Precondition Failed (an If-Match on a stale ETag) say that the resource
// changed since it was read: Conflict, which kopgo's loop retries at once
// and quietly, through the rate limiter, so that the next attempt reads
// the resource again. A create by PUT that can meet an existing resource
// is told apart by the caller: koperrors.WrapKind(koperrors.AlreadyExists,
// err, "create record", ref) sets the Kind. Without resp.Request a 409 is
// Conflict.
//
// A Retry-After turns a 403, a 409 and a 412 into Unavailable: some
// systems send a quota or rate limit as a 403 (a verdict without one),
// and a 409 or 412 with a delay is a system busy with the resource (an
// operation in progress), which a prompt retry, as for a Conflict, would
// not wait for. A 401 stays terminal with one: credentials do not come
// back by waiting.
//
// # The message
//
// The message names the host, the method, the URL path (no query, no
// credentials) and the status, followed for a redirect by where it
// points, and by the start of the body (at most 512 bytes, on one line),
// such as "dns.example.com POST /v1/records: 429 Too Many Requests: slow
// down" or "dns.example.com GET /v1/records/r1: 301 Moved Permanently:
// redirect to https://api.example.com/v2/records/r1 not followed".
//
// FromHTTP reads up to 512 bytes of resp.Body and does not close it: the
// caller closes it, as after any response (defer resp.Body.Close()). A nil
// resp is an Internal error.
func FromHTTP(resp *http.Response) error {
	if resp == nil {
		return Errorf(Internal, "no HTTP response")
	}
	if hop := rewritten(resp.Request); hop != nil {
		msg := httpMessage(hop, "redirect to "+location(hop)+" followed as a GET: the "+hop.Request.Method+" was not carried out", nil)
		return &Error{Kind: Invalid, Err: &terminalError{err: &httpError{msg: msg, reason: "Redirected"}}}
	}
	code := resp.StatusCode
	if code >= 100 && code < 300 || code == http.StatusNotModified && conditional(resp.Request) {
		return nil
	}
	delay, hasDelay := retryAfterHeader(resp.Header)
	kind, terminal, reason := classifyHTTP(code, method(resp.Request), hasDelay)
	he := &httpError{msg: httpMessage(resp, statusDetail(resp), resp.Body), reason: reason, delay: delay}
	var cause error = he
	if terminal {
		cause = &terminalError{err: he}
	}
	return &Error{Kind: kind, Err: cause}
}

// classifyHTTP maps a status code, the request's method ("" when
// unknown) and whether the response carries a Retry-After to a Kind,
// whether it is terminal, and a condition reason ("": the Kind's,
// whatever wraps the error later). FromHTTP's table, row by row.
func classifyHTTP(code int, method string, retryAfter bool) (kind Kind, terminal bool, reason string) {
	switch {
	case code == http.StatusNotModified:
		return Invalid, true, ""
	case code >= 300 && code < 400:
		return Invalid, true, "Redirected"
	case code == http.StatusUnauthorized:
		return Forbidden, true, "Unauthorized"
	case code == http.StatusForbidden && retryAfter:
		return Unavailable, false, ""
	case code == http.StatusForbidden:
		return Forbidden, true, "Forbidden"
	case code == http.StatusNotFound || code == http.StatusGone:
		return NotFound, false, ""
	case (code == http.StatusConflict || code == http.StatusPreconditionFailed) && retryAfter:
		return Unavailable, false, ""
	case code == http.StatusConflict && method == http.MethodPost:
		return AlreadyExists, false, ""
	case code == http.StatusConflict || code == http.StatusPreconditionFailed:
		return Conflict, false, ""
	case code == http.StatusRequestTimeout || code == http.StatusGatewayTimeout:
		return Timeout, false, ""
	case code == http.StatusTooEarly || code == http.StatusTooManyRequests:
		return Unavailable, false, ""
	case code >= 400 && code < 500:
		return Invalid, true, ""
	case code >= 500 && code < 600:
		return Unavailable, false, ""
	}
	return Internal, false, ""
}

// method is req's method ("GET" for net/http's ""), or "" without req.
func method(req *http.Request) string {
	switch {
	case req == nil:
		return ""
	case req.Method == "":
		return http.MethodGet
	}
	return req.Method
}

// conditional reports whether req may be answered 304 Not Modified: it
// asked with If-None-Match or If-Modified-Since, or it is unknown (a
// response built without its request is given the benefit of the doubt).
func conditional(req *http.Request) bool {
	return req == nil || req.Header.Get("If-None-Match") != "" || req.Header.Get("If-Modified-Since") != ""
}

// httpMessage is "host METHOD /path: 429 Too Many Requests: detail: body
// start", without the parts that are empty.
func httpMessage(resp *http.Response, detail string, body io.Reader) string {
	var b strings.Builder
	if req := resp.Request; req != nil {
		if req.URL != nil && req.URL.Host != "" {
			b.WriteString(req.URL.Host + " ")
		}
		if req.Method != "" {
			b.WriteString(req.Method + " ")
		}
		if req.URL != nil {
			b.WriteString(req.URL.EscapedPath())
		}
	}
	prefix := strings.TrimSpace(b.String())
	b.Reset()
	if prefix != "" {
		b.WriteString(prefix + ": ")
	}
	b.WriteString(strconv.Itoa(resp.StatusCode))
	if text := http.StatusText(resp.StatusCode); text != "" {
		b.WriteString(" " + text)
	}
	if detail != "" {
		b.WriteString(": " + detail)
	}
	if start := bodyStart(body); start != "" {
		b.WriteString(": " + start)
	}
	return b.String()
}

// statusDetail says what a 3xx that FromHTTP reports means: where an
// unfollowed redirect points (scheme, host and path, resolved against the
// request's URL), or that a 304 answered a request that was not
// conditional. "" for other statuses.
func statusDetail(resp *http.Response) string {
	switch code := resp.StatusCode; {
	case code == http.StatusNotModified:
		return "answer to a request without If-None-Match or If-Modified-Since"
	case code < 300 || code >= 400:
		return ""
	}
	if _, err := resp.Location(); stderrors.Is(err, http.ErrNoLocation) {
		return "redirect without a Location"
	}
	return "redirect to " + location(resp) + " not followed"
}

// location is where the redirect resp points, resolved against its
// request's URL: scheme, host and path, without credentials, query or
// fragment; "an unparsable Location" when it does not parse.
func location(resp *http.Response) string {
	loc, err := resp.Location()
	if err != nil {
		return "an unparsable Location"
	}
	shown := url.URL{Scheme: loc.Scheme, Host: loc.Host, Path: loc.Path, RawPath: loc.RawPath}
	return shown.String()
}

// maxRedirects bounds the walk back through the redirects that led to a
// request: net/http's Client follows at most 10.
const maxRedirects = 20

// rewritten returns the redirect answer upon which net/http's Client sent
// the caller's write (a method other than GET and HEAD) again as a GET: a
// 301 or 302 (a 303 does so by design: it points at the write's result).
// The answer to that GET is not the write's, which was never carried out.
// nil when req was not reached that way.
func rewritten(req *http.Request) *http.Response {
	for range maxRedirects {
		if req == nil || req.Response == nil {
			return nil
		}
		hop := req.Response
		if (hop.StatusCode == http.StatusMovedPermanently || hop.StatusCode == http.StatusFound) &&
			hop.Request != nil && method(hop.Request) != http.MethodGet && hop.Request.Method != http.MethodHead {
			return hop
		}
		req = hop.Request
	}
	return nil
}

// bodyStart reads at most maxBody bytes of body and returns them as one
// line of valid UTF-8.
func bodyStart(body io.Reader) string {
	if body == nil || body == http.NoBody {
		return ""
	}
	buf, _ := io.ReadAll(io.LimitReader(body, maxBody)) // a body cut short still says something
	return strings.Join(strings.Fields(strings.ToValidUTF8(string(buf), "")), " ")
}

// retryAfterHeader is the delay a Retry-After header asks for, at most
// maxRetryAfter (0 for one in the past), and whether there is one that
// parses.
func retryAfterHeader(h http.Header) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil || secs > uint64(maxRetryAfter/time.Second) {
			return maxRetryAfter, true // only digits, too many for a uint64: huge
		}
		return time.Duration(secs) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	now := time.Now()
	if date, err := http.ParseTime(h.Get("Date")); err == nil {
		now = date // the server's clock: no skew between the two
	}
	return min(max(at.Sub(now), 0), maxRetryAfter), true
}

func isDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

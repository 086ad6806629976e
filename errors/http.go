package errors

import (
	"io"
	"net/http"
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
// errors. It returns nil for a response of status 1xx, 2xx or 3xx.
//
// The Kind follows the status, and some statuses are [Terminal] (a verdict
// that retrying the same request cannot change):
//
//	401                 Forbidden, terminal, reason "Unauthorized"
//	403                 Forbidden, terminal, reason "Forbidden"
//	404, 410            NotFound (not terminal: the caller decides, as a delete treats it as done)
//	409                 AlreadyExists
//	408                 Timeout
//	425, 429            Unavailable
//	other 4xx           Invalid, terminal (400, 422, ...)
//	500, 502, 503       Unavailable
//	504                 Timeout
//	other 5xx           Unavailable
//	anything else       Internal
//
// A Retry-After header (delta-seconds, or an HTTP-date measured from the
// response's Date header, else from the local clock) becomes the error's
// delay, at most an hour; [RetryAfterOf] returns it, and kopgo's loop
// retries no sooner. A Retry-After that does not parse is ignored. The
// condition reason ([ReasonOf]) is the one in the table, else the Kind.
//
// The message names the host, the method, the URL path (no query, no
// credentials) and the status, followed by the start of the body (at most
// 512 bytes, on one line), such as
// "dns.example.com POST /v1/records: 429 Too Many Requests: slow down".
//
// FromHTTP reads up to 512 bytes of resp.Body and does not close it: the
// caller closes it, as after any response (defer resp.Body.Close()). A nil
// resp is an Internal error.
func FromHTTP(resp *http.Response) error {
	if resp == nil {
		return Errorf(Internal, "no HTTP response")
	}
	code := resp.StatusCode
	if code >= 100 && code < 400 {
		return nil
	}
	kind, terminal, reason := classifyHTTP(code)
	he := &httpError{msg: httpMessage(resp), reason: reason, delay: retryAfterHeader(resp.Header)}
	var cause error = he
	if terminal {
		cause = &terminalError{err: he}
	}
	return &Error{Kind: kind, Err: cause}
}

// classifyHTTP maps a status code to a Kind, whether it is terminal, and a
// condition reason ("": the Kind's, whatever wraps the error later).
func classifyHTTP(code int) (kind Kind, terminal bool, reason string) {
	switch {
	case code == http.StatusUnauthorized:
		return Forbidden, true, "Unauthorized"
	case code == http.StatusForbidden:
		return Forbidden, true, "Forbidden"
	case code == http.StatusNotFound || code == http.StatusGone:
		return NotFound, false, ""
	case code == http.StatusConflict:
		return AlreadyExists, false, ""
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

// httpMessage is "host METHOD /path: 429 Too Many Requests: body start".
func httpMessage(resp *http.Response) string {
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
	if body := bodyStart(resp.Body); body != "" {
		b.WriteString(": " + body)
	}
	return b.String()
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
// maxRetryAfter; 0 for none, one in the past, or one that does not parse.
func retryAfterHeader(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if isDigits(v) {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil || secs > uint64(maxRetryAfter/time.Second) {
			return maxRetryAfter // only digits, too many for a uint64: huge
		}
		return time.Duration(secs) * time.Second
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	now := time.Now()
	if date, err := http.ParseTime(h.Get("Date")); err == nil {
		now = date // the server's clock: no skew between the two
	}
	d := at.Sub(now)
	if d <= 0 {
		return 0
	}
	return min(d, maxRetryAfter)
}

func isDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

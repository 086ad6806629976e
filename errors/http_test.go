package errors_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
)

// response is a response of code to POST https://user:secret@dns.example/v1/records?token=x.
func response(code int, header http.Header, body string) *http.Response {
	u, _ := url.Parse("https://user:secret@dns.example/v1/records?token=x")
	if header == nil {
		header = http.Header{}
	}
	return &http.Response{
		StatusCode: code,
		Status:     strconv.Itoa(code) + " whatever the server says",
		Header:     header,
		Body:       io.NopCloser(strings.NewReader(body)),
		Request:    &http.Request{Method: http.MethodPost, URL: u},
	}
}

// httpOutcome is what kopgo's loop and status.Finish read from an error.
type httpOutcome struct {
	Nil      bool
	Kind     string
	Terminal bool
	Reason   string
	Delay    time.Duration
}

func httpOutcomeOf(err error) httpOutcome {
	if err == nil {
		return httpOutcome{Nil: true}
	}
	d, _ := koperrors.RetryAfterOf(err)
	return httpOutcome{Kind: koperrors.KindOf(err).String(), Terminal: koperrors.IsTerminal(err), Reason: koperrors.ReasonOf(err), Delay: d}
}

// Every status class, and the codes the classification names.
func TestFromHTTPClassifies(t *testing.T) {
	tests := []struct {
		code int
		want httpOutcome
	}{
		{100, httpOutcome{Nil: true}},
		{200, httpOutcome{Nil: true}},
		{204, httpOutcome{Nil: true}},
		{301, httpOutcome{Nil: true}},
		{304, httpOutcome{Nil: true}},
		{400, httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Invalid"}},
		{401, httpOutcome{Kind: "Forbidden", Terminal: true, Reason: "Unauthorized"}},
		{403, httpOutcome{Kind: "Forbidden", Terminal: true, Reason: "Forbidden"}},
		{404, httpOutcome{Kind: "NotFound", Reason: "NotFound"}},
		{405, httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Invalid"}},
		{408, httpOutcome{Kind: "Timeout", Reason: "Timeout"}},
		{409, httpOutcome{Kind: "AlreadyExists", Reason: "AlreadyExists"}},
		{410, httpOutcome{Kind: "NotFound", Reason: "NotFound"}},
		{412, httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Invalid"}},
		{422, httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Invalid"}},
		{425, httpOutcome{Kind: "Unavailable", Reason: "Unavailable"}},
		{429, httpOutcome{Kind: "Unavailable", Reason: "Unavailable"}},
		{451, httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Invalid"}},
		{499, httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Invalid"}},
		{500, httpOutcome{Kind: "Unavailable", Reason: "Unavailable"}},
		{501, httpOutcome{Kind: "Unavailable", Reason: "Unavailable"}},
		{502, httpOutcome{Kind: "Unavailable", Reason: "Unavailable"}},
		{503, httpOutcome{Kind: "Unavailable", Reason: "Unavailable"}},
		{504, httpOutcome{Kind: "Timeout", Reason: "Timeout"}},
		{599, httpOutcome{Kind: "Unavailable", Reason: "Unavailable"}},
		{600, httpOutcome{Kind: "Internal", Reason: "Internal"}},
		{0, httpOutcome{Kind: "Internal", Reason: "Internal"}},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.code), func(t *testing.T) {
			err := koperrors.FromHTTP(response(tt.code, nil, ""))
			if diff := cmp.Diff(tt.want, httpOutcomeOf(err)); diff != "" {
				t.Errorf("FromHTTP(%d) (-want +got):\n%s", tt.code, diff)
			}
			if err == nil {
				return
			}
			if _, ok := errors.AsType[*koperrors.Error](err); !ok {
				t.Errorf("FromHTTP(%d) = %T, want a *koperrors.Error", tt.code, err)
			}
			// Terminal as controller-runtime understands it, too.
			if got := errors.Is(err, reconcile.TerminalError(nil)); got != tt.want.Terminal {
				t.Errorf("controller-runtime terminal: %v, want %v", got, tt.want.Terminal)
			}
		})
	}
}

func TestFromHTTPMessage(t *testing.T) {
	long := strings.Repeat("x", 2000)
	tests := []struct {
		name string
		resp *http.Response
		want string
	}{
		{"no body", response(429, nil, ""),
			"dns.example POST /v1/records: 429 Too Many Requests"},
		{"body on one line", response(400, nil, "{\"error\":\n  \"name taken\"}\n"),
			`dns.example POST /v1/records: 400 Bad Request: {"error": "name taken"}`},
		{"long body cut at 512 bytes", response(503, nil, long),
			"dns.example POST /v1/records: 503 Service Unavailable: " + long[:512]},
		{"invalid UTF-8 dropped", response(500, nil, "bad \xff byte"),
			"dns.example POST /v1/records: 500 Internal Server Error: bad byte"},
		{"unknown status", response(599, nil, ""),
			"dns.example POST /v1/records: 599"},
		{"no request", &http.Response{StatusCode: 404, Body: http.NoBody},
			"404 Not Found"},
		{"nil body", &http.Response{StatusCode: 404},
			"404 Not Found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := koperrors.FromHTTP(tt.resp)
			if err == nil || err.Error() != tt.want {
				t.Errorf("message %q, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "token") {
				t.Errorf("message %q names the URL's credentials or query", err)
			}
		})
	}
}

// FromHTTP reads a bounded prefix of the body and leaves it open.
func TestFromHTTPReadsABoundedPrefix(t *testing.T) {
	body := &countingBody{r: strings.NewReader(strings.Repeat("y", 1<<20))}
	resp := response(500, nil, "")
	resp.Body = body
	if err := koperrors.FromHTTP(resp); err == nil {
		t.Fatal("FromHTTP(500) = nil")
	}
	if body.read > 512 || body.closed {
		t.Errorf("read %d bytes, closed %v; want at most 512, open", body.read, body.closed)
	}
}

type countingBody struct {
	r      io.Reader
	read   int
	closed bool
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += n
	return n, err
}

func (c *countingBody) Close() error { c.closed = true; return nil }

func TestFromHTTPNilResponse(t *testing.T) {
	err := koperrors.FromHTTP(nil)
	if err == nil || koperrors.KindOf(err) != koperrors.Internal {
		t.Errorf("FromHTTP(nil) = %v (%s), want an Internal error", err, koperrors.KindOf(err))
	}
}

func TestFromHTTPRetryAfter(t *testing.T) {
	date := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return date.Add(d).Format(http.TimeFormat) }
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
		ok     bool
	}{
		{"none", http.Header{}, 0, false},
		{"seconds", http.Header{"Retry-After": {"2"}}, 2 * time.Second, true},
		{"seconds with spaces", http.Header{"Retry-After": {" 120 "}}, 2 * time.Minute, true},
		{"zero", http.Header{"Retry-After": {"0"}}, 0, false},
		{"an hour", http.Header{"Retry-After": {"3600"}}, time.Hour, true},
		{"more than an hour", http.Header{"Retry-After": {"86400"}}, time.Hour, true},
		{"huge", http.Header{"Retry-After": {"99999999999999999999999999"}}, time.Hour, true},
		{"negative", http.Header{"Retry-After": {"-5"}}, 0, false},
		{"fraction", http.Header{"Retry-After": {"1.5"}}, 0, false},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0, false},
		{"HTTP-date from the Date header", http.Header{"Date": {at(0)}, "Retry-After": {at(90 * time.Second)}}, 90 * time.Second, true},
		{"HTTP-date far ahead", http.Header{"Date": {at(0)}, "Retry-After": {at(48 * time.Hour)}}, time.Hour, true},
		{"HTTP-date in the past", http.Header{"Date": {at(0)}, "Retry-After": {at(-time.Minute)}}, 0, false},
		{"HTTP-date without a Date header, in the past", http.Header{"Retry-After": {"Sun, 06 Nov 1994 08:49:37 GMT"}}, 0, false},
		{"RFC 850 date", http.Header{"Date": {at(0)}, "Retry-After": {date.Add(time.Minute).Format("Monday, 02-Jan-06 15:04:05 GMT")}}, time.Minute, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := koperrors.FromHTTP(response(429, tt.header, ""))
			d, ok := koperrors.RetryAfterOf(err)
			if d != tt.want || ok != tt.ok {
				t.Errorf("RetryAfterOf = %s, %v; want %s, %v", d, ok, tt.want, tt.ok)
			}
		})
	}
	t.Run("HTTP-date from the local clock", func(t *testing.T) {
		h := http.Header{"Retry-After": {time.Now().Add(time.Minute).UTC().Format(http.TimeFormat)}}
		d, ok := koperrors.RetryAfterOf(koperrors.FromHTTP(response(503, h, "")))
		if !ok || d < 58*time.Second || d > time.Minute {
			t.Errorf("RetryAfterOf = %s, %v; want about a minute", d, ok)
		}
	})
}

// A real response from an HTTP server, through net/http's client.
func TestFromHTTPRealResponse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "7")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}))
	defer srv.Close()
	resp, err := srv.Client().Post(srv.URL+"/v1/records?page=2", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	err = koperrors.FromHTTP(resp)
	host := strings.TrimPrefix(srv.URL, "http://")
	if want := host + " POST /v1/records: 429 Too Many Requests: slow down"; err == nil || err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if d, ok := koperrors.RetryAfterOf(err); d != 7*time.Second || !ok {
		t.Errorf("RetryAfterOf = %s, %v; want 7s", d, ok)
	}
}

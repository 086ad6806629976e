package errors_test

import (
	"errors"
	"io"
	"maps"
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
		{300, httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Redirected"}},
		{301, httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Redirected"}},
		{302, httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Redirected"}},
		{307, httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Redirected"}},
		{308, httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Redirected"}},
		{304, httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Invalid"}}, // to a POST that was not conditional
		{400, httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Invalid"}},
		{401, httpOutcome{Kind: "Forbidden", Terminal: true, Reason: "Unauthorized"}},
		{403, httpOutcome{Kind: "Forbidden", Terminal: true, Reason: "Forbidden"}},
		{404, httpOutcome{Kind: "NotFound", Reason: "NotFound"}},
		{405, httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Invalid"}},
		{408, httpOutcome{Kind: "Timeout", Reason: "Timeout"}},
		{409, httpOutcome{Kind: "AlreadyExists", Reason: "AlreadyExists"}}, // to a POST
		{410, httpOutcome{Kind: "NotFound", Reason: "NotFound"}},
		{412, httpOutcome{Kind: "Conflict", Reason: "Conflict"}},
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

// exchange is a response of code, with header, to method on
// https://dns.example/v1/records/r1, sent with reqHeader.
func exchange(method string, reqHeader http.Header, code int, header http.Header) *http.Response {
	resp := response(code, header, "")
	resp.Request.Method = resp.Request.Method[:0] + method
	resp.Request.URL.Path = "/v1/records/r1"
	resp.Request.Header = reqHeader
	return resp
}

// The statuses whose meaning depends on the request or on Retry-After:
// an unfollowed redirect, a 304, a 409 and a 412 (optimistic locking),
// and a 403 that is a rate limit.
func TestFromHTTPSemantics(t *testing.T) {
	ra := func(v string) http.Header { return http.Header{"Retry-After": {v}} }
	etag := http.Header{"If-None-Match": {`"v7"`}}
	since := http.Header{"If-Modified-Since": {"Sun, 01 Mar 2026 12:00:00 GMT"}}
	tests := []struct {
		name   string
		method string
		req    http.Header
		code   int
		header http.Header
		want   httpOutcome
	}{
		{"304 to a GET with If-None-Match: the caller's copy is current", http.MethodGet, etag, 304, nil, httpOutcome{Nil: true}},
		{"304 to a GET with If-Modified-Since", http.MethodGet, since, 304, nil, httpOutcome{Nil: true}},
		{"304 to a GET that was not conditional", http.MethodGet, nil, 304, nil,
			httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Invalid"}},
		{"301 to a GET", http.MethodGet, nil, 301, http.Header{"Location": {"https://api.example/v2/records/r1"}},
			httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Redirected"}},
		{"307 to a POST", http.MethodPost, nil, 307, http.Header{"Location": {"/v2/records"}},
			httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Redirected"}},
		{"409 to a POST: a create met an existing resource", http.MethodPost, nil, 409, nil,
			httpOutcome{Kind: "AlreadyExists", Reason: "AlreadyExists"}},
		{"409 to a PUT: a conflict", http.MethodPut, nil, 409, nil, httpOutcome{Kind: "Conflict", Reason: "Conflict"}},
		{"409 to a PATCH", http.MethodPatch, nil, 409, nil, httpOutcome{Kind: "Conflict", Reason: "Conflict"}},
		{"409 to a DELETE", http.MethodDelete, nil, 409, nil, httpOutcome{Kind: "Conflict", Reason: "Conflict"}},
		{"409 to a GET", http.MethodGet, nil, 409, nil, httpOutcome{Kind: "Conflict", Reason: "Conflict"}},
		{"409 with Retry-After: busy", http.MethodDelete, nil, 409, ra("5"),
			httpOutcome{Kind: "Unavailable", Reason: "Unavailable", Delay: 5 * time.Second}},
		{"409 to a POST with Retry-After", http.MethodPost, nil, 409, ra("5"),
			httpOutcome{Kind: "Unavailable", Reason: "Unavailable", Delay: 5 * time.Second}},
		{"412 to a PUT with If-Match: an ETag mismatch", http.MethodPut, http.Header{"If-Match": {`"v6"`}}, 412, nil,
			httpOutcome{Kind: "Conflict", Reason: "Conflict"}},
		{"412 with Retry-After", http.MethodPut, nil, 412, ra("10"),
			httpOutcome{Kind: "Unavailable", Reason: "Unavailable", Delay: 10 * time.Second}},
		{"403 with Retry-After: a rate limit", http.MethodPost, nil, 403, ra("30"),
			httpOutcome{Kind: "Unavailable", Reason: "Unavailable", Delay: 30 * time.Second}},
		{"403 with Retry-After 0", http.MethodPost, nil, 403, ra("0"), httpOutcome{Kind: "Unavailable", Reason: "Unavailable"}},
		{"403 with a Retry-After that does not parse", http.MethodPost, nil, 403, ra("soon"),
			httpOutcome{Kind: "Forbidden", Terminal: true, Reason: "Forbidden"}},
		{"401 with Retry-After stays terminal", http.MethodPost, nil, 401, ra("30"),
			httpOutcome{Kind: "Forbidden", Terminal: true, Reason: "Unauthorized", Delay: 30 * time.Second}},
		{"400 with Retry-After stays terminal", http.MethodPost, nil, 400, ra("30"),
			httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Invalid", Delay: 30 * time.Second}},
		{"301 with Retry-After stays terminal", http.MethodGet, nil, 301, ra("30"),
			httpOutcome{Kind: "Invalid", Terminal: true, Reason: "Redirected", Delay: 30 * time.Second}},
		{"404 with Retry-After", http.MethodGet, nil, 404, ra("30"),
			httpOutcome{Kind: "NotFound", Reason: "NotFound", Delay: 30 * time.Second}},
		{"202 with Retry-After: a success", http.MethodPost, nil, 202, ra("30"), httpOutcome{Nil: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := koperrors.FromHTTP(exchange(tt.method, tt.req, tt.code, tt.header))
			if diff := cmp.Diff(tt.want, httpOutcomeOf(err)); diff != "" {
				t.Errorf("FromHTTP(%s %d) (-want +got):\n%s", tt.method, tt.code, diff)
			}
			if got := errors.Is(err, reconcile.TerminalError(nil)); got != tt.want.Terminal {
				t.Errorf("controller-runtime terminal: %v, want %v", got, tt.want.Terminal)
			}
		})
	}
	t.Run("304 without its request", func(t *testing.T) {
		if err := koperrors.FromHTTP(&http.Response{StatusCode: 304, Body: http.NoBody}); err != nil {
			t.Errorf("FromHTTP(304) = %v, want nil", err)
		}
	})
	t.Run("409 without its request", func(t *testing.T) {
		err := koperrors.FromHTTP(&http.Response{StatusCode: 409, Body: http.NoBody})
		if diff := cmp.Diff(httpOutcome{Kind: "Conflict", Reason: "Conflict"}, httpOutcomeOf(err)); diff != "" {
			t.Errorf("FromHTTP(409) (-want +got):\n%s", diff)
		}
	})
}

// An unfollowed redirect names where it points, without credentials,
// query or fragment, resolved against the request's URL.
func TestFromHTTPRedirectMessage(t *testing.T) {
	tests := []struct {
		name     string
		location string
		want     string
	}{
		{"absolute", "https://user:pw@api.example/v2/records/r1?sig=abc#top",
			"dns.example GET /v1/records/r1: 301 Moved Permanently: redirect to https://api.example/v2/records/r1 not followed: moved"},
		{"relative", "/v2/records/r1?sig=abc",
			"dns.example GET /v1/records/r1: 301 Moved Permanently: redirect to https://dns.example/v2/records/r1 not followed: moved"},
		{"http to https", "https://dns.example/v1/records/r1",
			"dns.example GET /v1/records/r1: 301 Moved Permanently: redirect to https://dns.example/v1/records/r1 not followed: moved"},
		{"none", "",
			"dns.example GET /v1/records/r1: 301 Moved Permanently: redirect without a Location: moved"},
		{"unparsable", "http://[::1",
			"dns.example GET /v1/records/r1: 301 Moved Permanently: redirect to an unparsable Location not followed: moved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.location != "" {
				h.Set("Location", tt.location)
			}
			resp := exchange(http.MethodGet, nil, 301, h)
			resp.Body = io.NopCloser(strings.NewReader("moved"))
			err := koperrors.FromHTTP(resp)
			if err == nil || err.Error() != tt.want {
				t.Errorf("message %q, want %q", err, tt.want)
			}
		})
	}
	t.Run("304 not asked for", func(t *testing.T) {
		err := koperrors.FromHTTP(exchange(http.MethodGet, nil, 304, nil))
		want := "dns.example GET /v1/records/r1: 304 Not Modified: answer to a request without If-None-Match or If-Modified-Since"
		if err == nil || err.Error() != want {
			t.Errorf("message %q, want %q", err, want)
		}
	})
}

// Real answers from an HTTP server, through net/http's client: the
// redirects that reach the caller, a 304 to a conditional GET, a 412 to
// a PUT with a stale If-Match, and a 403 rate limit.
func TestFromHTTPRealSemantics(t *testing.T) {
	var puts int
	mux := http.NewServeMux()
	mux.HandleFunc("GET /old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/new?sig=s3cr3t", http.StatusMovedPermanently)
	})
	mux.HandleFunc("POST /old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/new", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("GET /new", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v7"`)
		if r.Header.Get("If-None-Match") == `"v7"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = io.WriteString(w, "{}")
	})
	mux.HandleFunc("PUT /new", func(w http.ResponseWriter, r *http.Request) {
		puts++
		if r.Header.Get("If-Match") != `"v7"` {
			http.Error(w, "etag mismatch", http.StatusPreconditionFailed)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /quota", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, "rate limit exceeded", http.StatusForbidden)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	noFollow := *srv.Client()
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	do := func(t *testing.T, c *http.Client, req *http.Request) error {
		t.Helper()
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return koperrors.FromHTTP(resp)
	}
	newReq := func(t *testing.T, method, path string, body io.Reader, h http.Header) *http.Request {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, body)
		if err != nil {
			t.Fatal(err)
		}
		maps.Copy(req.Header, h)
		return req
	}

	t.Run("redirect not followed by CheckRedirect", func(t *testing.T) {
		err := do(t, &noFollow, newReq(t, http.MethodGet, "/old", nil, nil))
		want := host + " GET /old: 301 Moved Permanently: redirect to http://" + host + "/new not followed"
		if err == nil || !strings.HasPrefix(err.Error(), want) || !koperrors.IsTerminal(err) || koperrors.ReasonOf(err) != "Redirected" {
			t.Errorf("FromHTTP = %v (terminal %v, reason %s), want a terminal Redirected error starting %q",
				err, koperrors.IsTerminal(err), koperrors.ReasonOf(err), want)
		}
	})
	t.Run("307 to a POST whose body cannot be sent again", func(t *testing.T) {
		body := io.NopCloser(strings.NewReader("{}")) // not a *strings.Reader: no GetBody
		err := do(t, srv.Client(), newReq(t, http.MethodPost, "/old", body, nil))
		want := host + " POST /old: 307 Temporary Redirect: redirect to http://" + host + "/new not followed"
		if err == nil || !strings.HasPrefix(err.Error(), want) || !koperrors.IsTerminal(err) {
			t.Errorf("FromHTTP = %v, want a terminal error starting %q", err, want)
		}
	})
	t.Run("redirect followed", func(t *testing.T) {
		if err := do(t, srv.Client(), newReq(t, http.MethodGet, "/old", nil, nil)); err != nil {
			t.Errorf("FromHTTP = %v, want nil", err)
		}
	})
	t.Run("304 to a conditional GET", func(t *testing.T) {
		if err := do(t, srv.Client(), newReq(t, http.MethodGet, "/new", nil, http.Header{"If-None-Match": {`"v7"`}})); err != nil {
			t.Errorf("FromHTTP = %v, want nil", err)
		}
	})
	t.Run("412 to a stale If-Match", func(t *testing.T) {
		err := do(t, srv.Client(), newReq(t, http.MethodPut, "/new", strings.NewReader("{}"), http.Header{"If-Match": {`"v6"`}}))
		if koperrors.KindOf(err) != koperrors.Conflict || koperrors.IsTerminal(err) {
			t.Errorf("FromHTTP = %v (%s, terminal %v), want a Conflict that is not terminal", err, koperrors.KindOf(err), koperrors.IsTerminal(err))
		}
		if puts != 1 {
			t.Errorf("%d PUTs, want 1", puts)
		}
	})
	t.Run("403 with Retry-After", func(t *testing.T) {
		err := do(t, srv.Client(), newReq(t, http.MethodPost, "/quota", strings.NewReader("{}"), nil))
		d, ok := koperrors.RetryAfterOf(err)
		if koperrors.KindOf(err) != koperrors.Unavailable || koperrors.IsTerminal(err) || d != 30*time.Second || !ok {
			t.Errorf("FromHTTP = %v (%s, terminal %v, delay %s), want Unavailable, not terminal, 30s",
				err, koperrors.KindOf(err), koperrors.IsTerminal(err), d)
		}
	})
}

// net/http's Client follows a 301 or 302 to a POST, PUT, PATCH or DELETE
// by sending a GET (a 303 too, which is meant so): the answer is then to
// that GET, and the caller's write was never carried out.
func TestFromHTTPRedirectThatDroppedTheWrite(t *testing.T) {
	var writes int
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		code := http.StatusMovedPermanently
		if r.URL.Query().Get("code") != "" {
			code, _ = strconv.Atoi(r.URL.Query().Get("code"))
		}
		http.Redirect(w, r, "/v2/"+strings.TrimPrefix(r.URL.Path, "/v1/")+"?sig=s3cr3t", code)
	})
	mux.HandleFunc("GET /v2/", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"records":[]}`) })
	mux.HandleFunc("/v2/", func(w http.ResponseWriter, _ *http.Request) { writes++; w.WriteHeader(http.StatusNoContent) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	tests := []struct {
		method, query string
		want          string // "": nil
	}{
		{http.MethodPost, "", host + " POST /v1/records: 301 Moved Permanently: redirect to http://" + host + "/v2/records followed as a GET: the POST was not carried out"},
		{http.MethodPost, "?code=302", host + " POST /v1/records: 302 Found: redirect to http://" + host + "/v2/records followed as a GET: the POST was not carried out"},
		{http.MethodDelete, "", host + " DELETE /v1/records: 301 Moved Permanently: redirect to http://" + host + "/v2/records followed as a GET: the DELETE was not carried out"},
		{http.MethodPut, "?code=302", host + " PUT /v1/records: 302 Found: redirect to http://" + host + "/v2/records followed as a GET: the PUT was not carried out"},
		{http.MethodPost, "?code=303", ""}, // See Other: the POST's result is over there
		{http.MethodGet, "", ""},
		{http.MethodHead, "?code=302", ""},
		{http.MethodPost, "?code=307", ""}, // followed as a POST
	}
	for _, tt := range tests {
		t.Run(tt.method+tt.query, func(t *testing.T) {
			writes = 0
			req, err := http.NewRequestWithContext(t.Context(), tt.method, srv.URL+"/v1/records"+tt.query, strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			err = koperrors.FromHTTP(resp)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("FromHTTP = %v, want nil", err)
			case tt.want == "":
			case err == nil || err.Error() != tt.want:
				t.Errorf("FromHTTP = %v, want %q", err, tt.want)
			case !koperrors.IsTerminal(err) || koperrors.ReasonOf(err) != "Redirected" || koperrors.KindOf(err) != koperrors.Invalid:
				t.Errorf("FromHTTP = %s, terminal %v, reason %s; want Invalid, terminal, Redirected",
					koperrors.KindOf(err), koperrors.IsTerminal(err), koperrors.ReasonOf(err))
			}
			if tt.method == http.MethodPost && tt.query == "?code=307" && writes != 1 {
				t.Errorf("%d writes at /v2/, want 1", writes)
			}
		})
	}
}

// A hand-built chain of redirects that loops back on itself ends.
func TestFromHTTPRedirectChainLoop(t *testing.T) {
	req := &http.Request{Method: http.MethodGet, URL: &url.URL{Scheme: "https", Host: "dns.example", Path: "/v1/records"}}
	req.Response = &http.Response{StatusCode: http.StatusTemporaryRedirect, Request: req}
	if err := koperrors.FromHTTP(&http.Response{StatusCode: http.StatusOK, Request: req}); err != nil {
		t.Errorf("FromHTTP = %v, want nil", err)
	}
}

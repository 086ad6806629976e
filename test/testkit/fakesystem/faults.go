package fakesystem

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// Fault is a failure the system injects into the requests it matches.
//
// Which requests: those of Method to a path that Path matches; of them,
// the first Skip pass, then Times meet the fault (0: every one after), or,
// with a Rate, each meets it with that probability, drawn from the
// system's seeded source ([Options.Seed]; the draws follow the order the
// requests arrive in, which concurrent clients do not fix).
//
// What they meet, in this order: Latency, then one of Hang, Reset
// (without LoseAnswer), an answer with Status (and Retry-After) instead of
// serving the request, or LoseAnswer. A Fault with only Latency delays the
// request and serves it. Faults come before authentication, as at a
// gateway.
type Fault struct {
	// Method is the HTTP method matched; "" matches every method.
	Method string
	// Path is a pattern (path.Match) the request's path must match, e.g.
	// "/v1/resources/*"; "" matches every path.
	Path string
	// Skip is how many matching requests pass before the fault applies.
	Skip int
	// Times is how many matching requests meet the fault; 0 means every
	// one (with a Rate: every one the draw selects).
	Times int
	// Rate, when above 0, is the probability (up to 1) that a matching
	// request meets the fault.
	Rate float64

	// Status is the answer's status code (100-599), sent instead of
	// serving the request; with LoseAnswer, the answer to the served
	// request (default 502). With only a RetryAfter, 429.
	Status int
	// RetryAfter, above 0, is sent as a Retry-After header, in whole
	// seconds rounded up.
	RetryAfter time.Duration
	// Latency delays the request before anything else; it ends early when
	// the client gives up or the system closes.
	Latency time.Duration
	// Hang holds the request, unanswered, until the client gives up (its
	// context ends) or the system closes. Logged with status
	// [StatusClientGone].
	Hang bool
	// LoseAnswer serves the request (a create stores its resource, the
	// [System.OnWrite] hook runs) and then loses the answer: the client
	// gets Status (502 by default) or, with Reset, a reset connection. The
	// write took effect and the client cannot know.
	LoseAnswer bool
	// Reset resets the connection (TCP RST): before the request is
	// served, or, with LoseAnswer, after. Logged with status 0. Go's
	// http.Transport may send a GET again on its own after a reset of a
	// reused connection: count both.
	Reset bool
}

// StatusClientGone is the status logged for a request whose client gave
// up before it was answered (nginx's 499).
const StatusClientGone = 499

// validate reports the first field of f that makes no sense, naming it.
func (f Fault) validate() error {
	switch {
	case f.Rate < 0 || f.Rate > 1:
		return fmt.Errorf("invalid Rate %v: want a probability in [0, 1]", f.Rate)
	case f.Skip < 0 || f.Times < 0:
		return fmt.Errorf("invalid Skip %d, Times %d: must not be negative", f.Skip, f.Times)
	case f.Status != 0 && (f.Status < 100 || f.Status > 599):
		return fmt.Errorf("invalid Status %d: want an HTTP status code (100-599)", f.Status)
	case f.RetryAfter < 0 || f.Latency < 0:
		return fmt.Errorf("invalid RetryAfter %s, Latency %s: must not be negative", f.RetryAfter, f.Latency)
	case f.Hang && (f.LoseAnswer || f.Reset || f.Status != 0):
		return fmt.Errorf("invalid Hang: it excludes Status, Reset and LoseAnswer (a hung request gets no answer)")
	case f.Reset && !f.LoseAnswer && f.Status != 0:
		return fmt.Errorf("invalid Reset with Status %d: a reset connection carries no status (add LoseAnswer to serve first)", f.Status)
	}
	if _, err := path.Match(f.Path, "/"); err != nil {
		return fmt.Errorf("invalid Path %q: %w", f.Path, err)
	}
	return nil
}

// faultEntry is an injected Fault with its counts.
type faultEntry struct {
	Fault
	seen, hits int
}

// Inject adds faults after those already injected. A request meets the
// first one that applies to it, at most one. An invalid Fault is an error
// naming it and its field, and none of faults is added.
func (s *System) Inject(faults ...Fault) error {
	for i, f := range faults {
		if err := f.validate(); err != nil {
			return fmt.Errorf("fault %d (%s %q): %w", i, f.Method, f.Path, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range faults {
		s.faults = append(s.faults, &faultEntry{Fault: f})
	}
	return nil
}

// ClearFaults removes every injected fault.
func (s *System) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// draw returns the fault r meets, if any; the caller holds s.mu.
func (s *System) draw(r *http.Request) *Fault {
	for _, f := range s.faults {
		if f.Method != "" && f.Method != r.Method {
			continue
		}
		if ok, _ := path.Match(f.Path, r.URL.Path); f.Path != "" && !ok {
			continue
		}
		f.seen++
		if f.seen <= f.Skip || (f.Times > 0 && f.hits >= f.Times) || (f.Rate > 0 && s.rng.Float64() >= f.Rate) {
			continue
		}
		f.hits++
		out := f.Fault
		return &out
	}
	return nil
}

// handle wraps an API handler with the log, the faults, authentication
// and the write hook.
func (s *System) handle(serve func(*http.Request) (answer, *Resource)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		req := Request{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Token: token}
		defer s.arrived(req)()
		// Read the body first: net/http notices that the client left (and
		// ends the request's context) only once the body is read.
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.mu.Lock()
		f := s.draw(r)
		s.mu.Unlock()
		var a answer
		switch {
		case f != nil && !s.wait(r, f.Latency, f.Hang):
			req.Status = StatusClientGone
		case f != nil && f.Reset && !f.LoseAnswer:
			req.Status = resetConn(w)
		case f != nil && (f.Status != 0 || f.RetryAfter > 0) && !f.LoseAnswer:
			a = errorAnswer(cmp.Or(f.Status, http.StatusTooManyRequests), "injected fault")
		case err != nil:
			a = errorAnswer(http.StatusBadRequest, "body: "+err.Error())
		default:
			if !s.authorized(token) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="fakesystem"`)
				a = errorAnswer(http.StatusUnauthorized, "missing, unknown or revoked bearer token")
				break
			}
			var wrote *Resource
			a, wrote = serve(r)
			if wrote != nil {
				s.mu.Lock()
				hook := s.onWrite
				s.mu.Unlock()
				if hook != nil {
					hook(Write{Method: r.Method, Path: r.URL.Path, Resource: *wrote})
				}
			}
			if f != nil && f.LoseAnswer && f.Reset {
				req.Status, a = resetConn(w), answer{}
			} else if f != nil && f.LoseAnswer {
				a = errorAnswer(cmp.Or(f.Status, http.StatusBadGateway), "injected fault: answer lost")
			}
		}
		if a.status != 0 {
			if f != nil && f.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int((f.RetryAfter+time.Second-1)/time.Second)))
			}
			writeJSON(w, a)
			req.Status = a.status
		}
		req.Injected = f != nil
		req.Duration = time.Since(req.Time)
		s.record(req)
		s.answered(w, req, a)
	}
}

// answered flushes the answer and calls the [System.OnAnswer] hook.
func (s *System) answered(w http.ResponseWriter, req Request, a answer) {
	s.mu.Lock()
	hook := s.onAns
	s.mu.Unlock()
	if hook == nil {
		return
	}
	if fl, ok := w.(http.Flusher); ok && a.status != 0 {
		fl.Flush()
	}
	out := Answered{Request: req}
	if res, ok := a.body.(Resource); ok {
		out.Resource = &res
	}
	hook(out)
}

// wait delays the request by d, or holds it with hang, until the client
// gives up or the system closes; it reports whether the request goes on.
func (s *System) wait(r *http.Request, d time.Duration, hang bool) bool {
	var timeout <-chan time.Time
	if !hang {
		if d <= 0 {
			return true
		}
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-timeout:
		return true
	case <-r.Context().Done():
	case <-s.closed:
	}
	return false
}

// resetConn closes the request's connection with a TCP RST; it returns
// the status logged for it, 0.
func resetConn(w http.ResponseWriter) int {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler) // net/http closes the connection
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
	return 0
}

func writeJSON(w http.ResponseWriter, a answer) {
	if a.body == nil {
		w.WriteHeader(a.status)
		return
	}
	// With its length set, the answer is complete for the client once
	// flushed, before the handler returns (see System.OnAnswer).
	b, err := json.Marshal(a.body)
	if err != nil {
		b, a.status = []byte(`{"error": "encode the answer"}`), http.StatusInternalServerError
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(a.status)
	_, _ = w.Write(b)
}

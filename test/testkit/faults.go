package testkit

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Faults are the faults a [FaultProxy] injects. Each rate is a probability
// per request, from 0 (never) to 1 (every request); the zero value injects
// nothing. Set them with [StartFaultProxy] and change them at run time with
// [FaultProxy.SetFaults].
//
// ResetBeforeServer, TooManyRequests, Error500 and ResetAfterServer exclude
// each other: one draw decides which of them, if any, a request meets, so
// their rates are exact while they sum to at most 1 (beyond that, the later
// ones in this list get what is left). Latency and DropWatch are drawn
// independently and add to them.
type Faults struct {
	// Seed seeds the random source, afresh at every [FaultProxy.SetFaults]:
	// the same seed and the same sequence of requests meet the same faults.
	// (Concurrent requests arrive in no fixed order, so a run of an operator
	// is repeatable in its fault rates, not request by request.)
	Seed uint64

	// Match restricts the faults to the requests it returns true for; the
	// others are forwarded untouched. Nil matches every request, including
	// discovery. [IsWrite] restricts them to writes.
	Match func(*http.Request) bool

	// ResetBeforeServer resets the client's connection without forwarding
	// the request: nothing reached the server, and the client sees a
	// connection error.
	ResetBeforeServer float64

	// TooManyRequests answers 429 with a Retry-After header and a
	// metav1.Status body (reason TooManyRequests, details.retryAfterSeconds),
	// as the API server's priority and fairness does, without forwarding.
	//
	// client-go retries such an answer by itself, after Retry-After, up to 10
	// times (rest.Request.MaxRetries; rest.Config has no setting for it), so a
	// caller sees a 429 only when all 11 attempts meet one; at lower rates a
	// 429 shows as latency of whole seconds.
	TooManyRequests float64

	// RetryAfter is the Retry-After of TooManyRequests, rounded up to whole
	// seconds. Default 1s, what the API server sends.
	RetryAfter time.Duration

	// Error500 answers 500 with a metav1.Status body (reason InternalError)
	// without forwarding: client-go returns an error for which
	// apierrors.IsInternalError is true, and does not retry it.
	Error500 float64

	// ResetAfterServer forwards the request, reads the server's whole answer,
	// and then resets the client's connection instead of writing it: a write
	// whose answer was lost. The client sees a connection error although the
	// write took effect. Watch requests are exempt (DropWatch cuts those).
	ResetAfterServer float64

	// Latency delays a request by Delay plus a random part of Jitter before it
	// is forwarded (or failed). The delay ends early when the client gives up,
	// and the connection is reset when the proxy is paused or closed.
	Latency float64

	// Delay is the fixed part of Latency.
	Delay time.Duration

	// Jitter is the random part of Latency: uniform in [0, Jitter).
	Jitter time.Duration

	// DropWatch cuts a watch request (watch=true) after a random time,
	// uniform in (0, WatchLifetime]: the stream ends mid-way, as when a load
	// balancer or an API server restart drops it, and the client must watch
	// again.
	DropWatch float64

	// WatchLifetime bounds the life of a watch that DropWatch cuts.
	// Default 2s.
	WatchLifetime time.Duration

	// ExpireWatch answers a watch request 410 Gone (reason Expired, "too
	// old resource version") without forwarding it, as the API server
	// does when a watch resumes from a version it no longer holds (after
	// a restart, or a long disconnection past etcd's compaction). The
	// client relists: an informer then delivers each object that changed
	// meanwhile as one update, from the version it had to the newest,
	// however many changes lie between.
	ExpireWatch float64
}

// IsWrite reports whether r is a write (POST, PUT, PATCH or DELETE): for
// [Faults.Match], to inject faults into writes only.
func IsWrite(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// FaultStats counts what a [FaultProxy] did since it started. Each fault
// field counts the requests that met that fault.
type FaultStats struct {
	// Requests is the number of requests the proxy received.
	Requests int64
	// Forwarded is the number of requests sent on to the API server,
	// including those answered with ResetAfterServer.
	Forwarded int64
	// Paused counts the requests reset because the proxy was paused (not
	// those in flight that a pause cut).
	Paused int64

	// The faults injected, one count per rate of [Faults]; Latency counts
	// the requests delayed.
	ResetBeforeServer int64
	TooManyRequests   int64
	Error500          int64
	ResetAfterServer  int64
	Latency           int64
	DropWatch         int64
	ExpireWatch       int64
}

// Injected is the number of faults injected, pauses not counted.
func (s FaultStats) Injected() int64 {
	return s.ResetBeforeServer + s.TooManyRequests + s.Error500 + s.ResetAfterServer + s.Latency + s.DropWatch + s.ExpireWatch
}

// String reports the counts in one line, for a test's log:
// "120 requests, 101 forwarded, 31 faults injected (5 Error500, ...)".
func (s FaultStats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d requests, %d forwarded, %d faults injected", s.Requests, s.Forwarded, s.Injected())
	sep := " ("
	for _, f := range []struct {
		name string
		n    int64
	}{
		{"ResetBeforeServer", s.ResetBeforeServer}, {"TooManyRequests", s.TooManyRequests},
		{"Error500", s.Error500}, {"ResetAfterServer", s.ResetAfterServer},
		{"Latency", s.Latency}, {"DropWatch", s.DropWatch}, {"ExpireWatch", s.ExpireWatch}, {"Paused", s.Paused},
	} {
		if f.n > 0 {
			fmt.Fprintf(&b, "%s%d %s", sep, f.n, f.name)
			sep = ", "
		}
	}
	if sep == ", " {
		b.WriteString(")")
	}
	return b.String()
}

// faultCounters are the live counters behind FaultStats.
type faultCounters struct {
	requests, forwarded, paused                                 atomic.Int64
	resetBefore, tooManyRequests, error500, resetAfter, latency atomic.Int64
	dropWatch, expireWatch                                      atomic.Int64
}

func (c *faultCounters) snapshot() FaultStats {
	return FaultStats{
		Requests: c.requests.Load(), Forwarded: c.forwarded.Load(), Paused: c.paused.Load(),
		ResetBeforeServer: c.resetBefore.Load(), TooManyRequests: c.tooManyRequests.Load(),
		Error500: c.error500.Load(), ResetAfterServer: c.resetAfter.Load(),
		Latency: c.latency.Load(), DropWatch: c.dropWatch.Load(), ExpireWatch: c.expireWatch.Load(),
	}
}

// fault is the one exclusive fault a request meets.
type fault int

const (
	noFault fault = iota
	resetBeforeServer
	tooManyRequests
	error500
	resetAfterServer
	expireWatch
)

// plan is what happens to one request, drawn when it arrives.
type plan struct {
	fault     fault
	delay     time.Duration // Latency; 0 for none
	dropAfter time.Duration // DropWatch; 0 for none
}

// faultState is one setting of the faults with its random source; SetFaults
// replaces it as a whole.
type faultState struct {
	faults Faults

	mu  sync.Mutex
	rng *rand.Rand
}

func newFaultState(f Faults) *faultState {
	if f.RetryAfter <= 0 {
		f.RetryAfter = time.Second
	}
	if f.WatchLifetime <= 0 {
		f.WatchLifetime = 2 * time.Second
	}
	return &faultState{faults: f, rng: rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))}
}

// plan draws the faults r meets.
func (s *faultState) plan(r *http.Request) plan {
	f := &s.faults
	if f.Match != nil && !f.Match(r) {
		return plan{}
	}
	watch := isWatch(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	var p plan
	u := s.rng.Float64()
	for _, c := range []struct {
		rate  float64
		fault fault
	}{
		{f.ResetBeforeServer, resetBeforeServer}, {f.TooManyRequests, tooManyRequests},
		{f.Error500, error500}, {f.ResetAfterServer, resetAfterServer}, {f.ExpireWatch, expireWatch},
	} {
		if c.fault == resetAfterServer && watch {
			continue // watches are exempt (DropWatch cuts those)
		}
		if c.fault == expireWatch && !watch {
			break
		}
		if u < c.rate {
			p.fault = c.fault
			break
		}
		u -= max(c.rate, 0)
	}
	if s.rng.Float64() < f.Latency {
		p.delay = max(f.Delay, 0)
		if f.Jitter > 0 {
			p.delay += time.Duration(s.rng.Int64N(int64(f.Jitter)))
		}
	}
	if watch && p.fault == noFault && s.rng.Float64() < f.DropWatch {
		p.dropAfter = 1 + time.Duration(s.rng.Int64N(int64(f.WatchLifetime)))
	}
	return p
}

// retryAfterSeconds is the Retry-After header's value.
func (s *faultState) retryAfterSeconds() int {
	return int((s.faults.RetryAfter + time.Second - 1) / time.Second)
}

// isWatch reports whether r asks for a watch stream.
func isWatch(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	switch r.URL.Query().Get("watch") {
	case "true", "1":
		return true
	}
	// The deprecated /api/v1/watch/... and /apis/<group>/<version>/watch/... forms.
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	return len(parts) >= 3 && parts[0] == "api" && parts[2] == "watch" ||
		len(parts) >= 4 && parts[0] == "apis" && parts[3] == "watch"
}

package provider

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"
)

// Faults are the failures the provider injects into its API (never into
// /admin/). Each rate is a probability per request, from 0 (never) to 1
// (every request); the zero value injects nothing.
//
// TooManyRequests, ServerError and GatewayTimeout exclude each other: one
// draw decides which of them, if any, a request meets, so their rates are
// exact while they sum to at most 1. Latency is drawn apart and adds to
// them. Authentication comes after the faults, as behind a real gateway.
type Faults struct {
	// Seed seeds the random source, afresh at every [Server.SetFaults].
	Seed uint64 `json:"seed,omitempty"`

	// Ops restricts the faults to these operations; empty means all.
	Ops []Op `json:"ops,omitempty"`

	// TooManyRequests answers 429 with a Retry-After header, without
	// serving the request.
	TooManyRequests float64 `json:"tooManyRequests,omitempty"`

	// RetryAfter is the Retry-After of TooManyRequests, in whole seconds
	// (rounded up). Default 1s.
	RetryAfter time.Duration `json:"-"`

	// ServerError answers 500, 502 or 503 (equally likely) without serving
	// the request.
	ServerError float64 `json:"serverError,omitempty"`

	// GatewayTimeout serves the request (a create stores its record, a
	// delete removes it) and then answers 504 Gateway Timeout instead of
	// the result: the write took effect and the client cannot know.
	GatewayTimeout float64 `json:"gatewayTimeout,omitempty"`

	// Latency delays a request by Delay plus a random part of Jitter before
	// it is served (or failed). The delay ends early when the client gives
	// up.
	Latency float64 `json:"latency,omitempty"`

	// Delay is the fixed part of Latency.
	Delay time.Duration `json:"-"`

	// Jitter is the random part of Latency: uniform in [0, Jitter).
	Jitter time.Duration `json:"-"`
}

// MarshalJSON writes the durations as Go duration strings ("1.5s").
func (f Faults) MarshalJSON() ([]byte, error) {
	type plain Faults // without the methods, so that this does not recurse
	w := struct {
		plain
		RetryAfter string `json:"retryAfter,omitempty"`
		Delay      string `json:"delay,omitempty"`
		Jitter     string `json:"jitter,omitempty"`
	}{plain: plain(f), RetryAfter: durationString(f.RetryAfter), Delay: durationString(f.Delay), Jitter: durationString(f.Jitter)}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *Faults) UnmarshalJSON(data []byte) error {
	type plain Faults
	var w struct {
		plain
		RetryAfter string `json:"retryAfter"`
		Delay      string `json:"delay"`
		Jitter     string `json:"jitter"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*f = Faults(w.plain)
	for _, d := range []struct {
		s   string
		dst *time.Duration
	}{{w.RetryAfter, &f.RetryAfter}, {w.Delay, &f.Delay}, {w.Jitter, &f.Jitter}} {
		if d.s == "" {
			continue
		}
		v, err := time.ParseDuration(d.s)
		if err != nil {
			return fmt.Errorf("faults: %w", err)
		}
		*d.dst = v
	}
	return nil
}

func durationString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// fault is what one request meets.
type fault int

const (
	noFault fault = iota
	tooManyRequests
	serverError
	gatewayTimeout
)

// plan is the faults drawn for one request.
type plan struct {
	fault  fault
	status int // of serverError
	delay  time.Duration
}

// faultState is one setting of the faults with its random source.
type faultState struct {
	faults Faults
	rng    *rand.Rand // guarded by the Server's mutex
}

func newFaultState(f Faults) *faultState {
	if f.RetryAfter <= 0 {
		f.RetryAfter = time.Second
	}
	return &faultState{faults: f, rng: rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))}
}

// draw decides the faults a request of op meets. The caller holds the
// Server's mutex.
func (s *faultState) draw(op Op) plan {
	f := &s.faults
	if len(f.Ops) > 0 && !slices.Contains(f.Ops, op) {
		return plan{}
	}
	var p plan
	u := s.rng.Float64()
	for _, c := range []struct {
		rate  float64
		fault fault
	}{{f.TooManyRequests, tooManyRequests}, {f.ServerError, serverError}, {f.GatewayTimeout, gatewayTimeout}} {
		if u < c.rate {
			p.fault = c.fault
			break
		}
		u -= max(c.rate, 0)
	}
	if p.fault == serverError {
		p.status = []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable}[s.rng.IntN(3)]
	}
	if s.rng.Float64() < f.Latency {
		p.delay = max(f.Delay, 0)
		if f.Jitter > 0 {
			p.delay += time.Duration(s.rng.Int64N(int64(f.Jitter)))
		}
	}
	return p
}

// retryAfterSeconds is the Retry-After header's value.
func (s *faultState) retryAfterSeconds() int {
	return int((s.faults.RetryAfter + time.Second - 1) / time.Second)
}

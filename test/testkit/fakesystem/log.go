package fakesystem

import (
	"maps"
	"path"
	"slices"
	"time"
)

// Request is one request the system received, as its log holds it.
type Request struct {
	// Time is when it arrived.
	Time time.Time
	// Method and Path are the request's; Query its raw query ("tag=...").
	Method, Path, Query string
	// Token is the bearer token it carried, "" for none.
	Token string
	// Status is the answer's status code: 0 for a reset connection,
	// [StatusClientGone] for a client that gave up first.
	Status int
	// Injected reports whether a [Fault] applied to it.
	Injected bool
	// Duration is how long the system took to answer it.
	Duration time.Duration
}

// Answered is a request the system answered, as [System.OnAnswer] sees
// it.
type Answered struct {
	// Request is the request as logged.
	Request
	// Resource is the resource the answer carried: that of a create, a
	// read or an update served; nil for a list, a delete's 204, an error
	// or an injected fault (a lost answer carries none).
	Resource *Resource
}

// Stats are counts over the log, since the system started or since
// [System.ResetLog].
type Stats struct {
	// Requests is the number of requests received.
	Requests int
	// ByMethod counts them by HTTP method.
	ByMethod map[string]int
	// PeakPerSecond is the most requests that arrived within one second
	// of the clock (from a whole second to the next).
	PeakPerSecond int
	// Created is the number of resources a create stored, answered or not
	// (a lost answer, a client killed at the hook); Deleted the number a
	// delete removed, once done. Drift through [System.Remove] is not
	// counted.
	Created, Deleted int
}

func (s *System) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, r)
}

// Requests returns the log, oldest first (by the time each request was
// answered).
func (s *System) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// InFlight is the number of requests received and not answered yet: hung,
// delayed, or held by the [System.OnWrite] hook. A test waits on it to
// know that its calls hang.
func (s *System) InFlight() int { return int(s.inFlight.Load()) }

// Pending returns the requests received and not answered yet (hung,
// delayed, or held by a hook), oldest first, with Status 0: a test waits
// until the call it means to kill its client in is among them, e.g. a
// POST held by a Hang fault, whatever other requests are in flight.
func (s *System) Pending() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := slices.Sorted(maps.Keys(s.pending))
	out := make([]Request, len(keys))
	for i, k := range keys {
		out[i] = s.pending[k]
	}
	return out
}

// arrived adds r to the pending requests; the function it returns removes
// it.
func (s *System) arrived(r Request) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.arrivals++
	n := s.arrivals
	s.pending[n] = r
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.pending, n)
	}
}

// Count returns how many logged requests had method ("" any) and a path
// that pattern matches (path.Match, e.g. "/v1/resources/*"; "" any).
func (s *System) Count(method, pattern string) int {
	n := 0
	for _, r := range s.Requests() {
		if ok, _ := path.Match(pattern, r.Path); (method == "" || r.Method == method) && (pattern == "" || ok) {
			n++
		}
	}
	return n
}

// Stats counts the log.
func (s *System) Stats() Stats {
	s.mu.Lock()
	s.settle(time.Now())
	st := Stats{ByMethod: map[string]int{}, Created: s.created, Deleted: s.deleted}
	log := s.log
	s.mu.Unlock()
	perSecond := map[int64]int{}
	for _, r := range log {
		st.Requests++
		st.ByMethod[r.Method]++
		sec := r.Time.Unix()
		perSecond[sec]++
		st.PeakPerSecond = max(st.PeakPerSecond, perSecond[sec])
	}
	return st
}

// ResetLog empties the log and sets the counts to zero; the resources,
// tokens, faults and hook stay.
func (s *System) ResetLog() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log, s.created, s.deleted = nil, 0, 0
}

package provider

import (
	"maps"
	"time"
)

// Op names an operation of the provider's API, as [Stats] counts them and
// [Faults.Ops] selects them.
type Op string

// The API's operations.
const (
	OpCreate Op = "create" // POST /v1/records
	OpGet    Op = "get"    // GET /v1/records/{id}
	OpUpdate Op = "update" // PUT /v1/records/{id}
	OpDelete Op = "delete" // DELETE /v1/records/{id}
	OpList   Op = "list"   // GET /v1/records?tag=
)

// StatusClientGone is the status counted for a request whose client gave up
// while the provider delayed it (nginx's 499): it was not served.
const StatusClientGone = 499

// Stats counts what the API (not /admin/) served since the server started
// or since [Server.ResetStats].
type Stats struct {
	// Since is when the count began.
	Since time.Time `json:"since"`
	// Requests counts the answered requests by operation and HTTP status,
	// injected faults and 401s included.
	Requests map[Op]map[int]int `json:"requests"`
	// Creates is the number of records a create stored (those answered 504
	// by [Faults.GatewayTimeout] included).
	Creates int `json:"creates"`
	// Deletes is the number of records a delete removed.
	Deletes int `json:"deletes"`
	// PerSecond counts the requests received in each second:
	// PerSecond[i] those of the second that began i seconds after
	// Since.Truncate(time.Second), up to the second of the Stats call.
	PerSecond []int `json:"perSecond"`
}

// Total is the number of answered requests of ops, of every operation when
// none is given.
func (s Stats) Total(ops ...Op) int {
	if len(ops) == 0 {
		ops = []Op{OpCreate, OpGet, OpUpdate, OpDelete, OpList}
	}
	n := 0
	for _, op := range ops {
		for _, c := range s.Requests[op] {
			n += c
		}
	}
	return n
}

// Peak is the largest number of requests received in one second.
func (s Stats) Peak() int {
	peak := 0
	for _, n := range s.PerSecond {
		peak = max(peak, n)
	}
	return peak
}

// counters are the Server's running counts, guarded by its mutex.
type counters struct {
	since     time.Time
	requests  map[Op]map[int]int
	creates   int
	deletes   int
	perSecond map[int64]int // by Unix second
}

func newCounters(now time.Time) counters {
	return counters{since: now, requests: map[Op]map[int]int{}, perSecond: map[int64]int{}}
}

func (c *counters) answered(op Op, status int) {
	if c.requests[op] == nil {
		c.requests[op] = map[int]int{}
	}
	c.requests[op][status]++
}

func (c *counters) snapshot(now time.Time) Stats {
	s := Stats{Since: c.since, Requests: map[Op]map[int]int{}, Creates: c.creates, Deletes: c.deletes}
	for op, m := range c.requests {
		s.Requests[op] = maps.Clone(m)
	}
	first, last := c.since.Unix(), now.Unix()
	if last >= first {
		s.PerSecond = make([]int, last-first+1)
		for sec, n := range c.perSecond {
			if i := sec - first; i >= 0 && i < int64(len(s.PerSecond)) {
				s.PerSecond[i] = n
			}
		}
	}
	return s
}

package fakesystem

import (
	"crypto/subtle"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DefaultPath is the collection's path when [Options.Path] is empty.
const DefaultPath = "/v1/resources"

// Options configure a [System]. The zero value is a synchronous system at
// [DefaultPath] without authentication or faults.
type Options struct {
	// Path is the collection's path, e.g. "/v2/databases"; an item is at
	// Path + "/" + its ID. Default [DefaultPath].
	Path string
	// IDPrefix starts every ID the system assigns ("db-" gives "db-1",
	// "db-2", ...). Default "res-".
	IDPrefix string
	// Tokens, when not nil, turn authentication on: a request without
	// "Authorization: Bearer <one of them>" is answered 401. See
	// [System.SetTokens] for rotation and revocation.
	Tokens []string
	// Async makes writes asynchronous from the start; see [System.SetAsync].
	Async Async
	// Seed seeds the random source of the faults with a Rate.
	Seed uint64
	// Validate, when not nil, checks the resource a create or an update
	// would store (for a create: the body, with no ID or State yet; for an
	// update: the fields after the change, with the resource's ID, Tag and
	// State), as a real API checks a body: an error
	// answers the request 400 with {"error": <the error's message>} and
	// stores nothing. It runs after authentication, under the system's
	// lock: it must not call the System's methods.
	Validate func(Resource) error
}

// Async says how long each kind of write takes. A write with a duration
// above zero is answered 202 Accepted with the resource in state
// [Creating], [Updating] or [Deleting]; it is [Ready] (or, after a delete,
// gone: 404) once the duration has passed. Zero is synchronous: 201, 200
// and 204.
type Async struct {
	Create, Update, Delete time.Duration
}

// System is a fake external system: an in-memory store of [Resource]s
// behind a JSON HTTP API on a loopback port, with bearer-token
// authentication, fault injection ([System.Inject]), a hook between a
// write and its answer ([System.OnWrite]) and a log of every request
// ([System.Requests], [System.Stats]). All its methods are safe for
// concurrent use. See the package documentation for the API it serves.
type System struct {
	srv    *httptest.Server
	path   string
	prefix string
	closed chan struct{} // ends hung and delayed requests at Close

	inFlight atomic.Int64

	mu      sync.Mutex
	res     map[string]*entry
	lastID  int
	auth    bool
	tokens  [][]byte
	async   Async
	faults  []*faultEntry
	rng     *rand.Rand
	onWrite func(Write)
	onAns   func(Answered)
	valid   func(Resource) error
	log     []Request
	// pending are the requests not answered yet, by arrival number.
	pending  map[uint64]Request
	arrivals uint64
	created  int
	deleted  int
}

// New starts a System on a free loopback port. Call [System.Close] when
// done, or use [Start] in a test.
func New(o Options) (*System, error) {
	if o.Path == "" {
		o.Path = DefaultPath
	}
	if !strings.HasPrefix(o.Path, "/") || strings.HasSuffix(o.Path, "/") || strings.ContainsAny(o.Path, "{}? ") {
		return nil, fmt.Errorf("fakesystem options: invalid Path %q: want an absolute path without a trailing slash, braces or spaces", o.Path)
	}
	if err := o.Async.validate(); err != nil {
		return nil, fmt.Errorf("fakesystem options: %w", err)
	}
	if o.IDPrefix == "" {
		o.IDPrefix = "res-"
	}
	s := &System{
		path: o.Path, prefix: o.IDPrefix, closed: make(chan struct{}),
		res: map[string]*entry{}, async: o.Async, valid: o.Validate,
		pending: map[uint64]Request{},
		rng:     rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15)),
	}
	if o.Tokens != nil {
		s.SetTokens(o.Tokens...)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+o.Path, s.handle(s.create))
	mux.HandleFunc("GET "+o.Path, s.handle(s.list))
	mux.HandleFunc("GET "+o.Path+"/{id}", s.handle(s.get))
	mux.HandleFunc("PUT "+o.Path+"/{id}", s.handle(s.update))
	mux.HandleFunc("PATCH "+o.Path+"/{id}", s.handle(s.update))
	mux.HandleFunc("DELETE "+o.Path+"/{id}", s.handle(s.delete))
	mux.HandleFunc("/", s.handle(func(r *http.Request) (answer, *Resource) {
		return errorAnswer(http.StatusNotFound, "no route for "+r.Method+" "+r.URL.Path), nil
	}))
	s.srv = httptest.NewServer(mux)
	return s, nil
}

// Start starts a System as [New] does and closes it when the test ends;
// an invalid Options fails the test.
func Start(tb testing.TB, o Options) *System {
	tb.Helper()
	s, err := New(o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Close ends requests still hung or delayed by a fault, and stops the
// server. It is idempotent.
func (s *System) Close() {
	s.mu.Lock()
	select {
	case <-s.closed:
		s.mu.Unlock()
		return
	default:
		close(s.closed)
	}
	s.mu.Unlock()
	s.srv.Close()
}

// URL is the system's base URL, "http://127.0.0.1:<port>".
func (s *System) URL() string { return s.srv.URL }

// CollectionURL is the collection's URL: URL plus [Options.Path].
func (s *System) CollectionURL() string { return s.srv.URL + s.path }

// SetTokens replaces the accepted bearer tokens and turns authentication
// on: a request with a token not among them is answered 401 from the next
// request on (a rotation; with no tokens, every request is refused).
func (s *System) SetTokens(tokens ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.auth, s.tokens = true, nil
	for _, t := range tokens {
		if t != "" {
			s.tokens = append(s.tokens, []byte(t))
		}
	}
}

// Revoke removes token from the accepted ones, and keeps the others.
func (s *System) Revoke(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.tokens[:0]
	for _, t := range s.tokens {
		if string(t) != token {
			kept = append(kept, t)
		}
	}
	s.tokens = kept
}

// SetAsync changes how long writes take, from the next write on (see
// [Async]). A negative duration is an error naming the field.
func (s *System) SetAsync(a Async) error {
	if err := a.validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.async = a
	return nil
}

func (a Async) validate() error {
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"Create", a.Create}, {"Update", a.Update}, {"Delete", a.Delete}} {
		if d.d < 0 {
			return fmt.Errorf("invalid Async.%s %s: must not be negative", d.name, d.d)
		}
	}
	return nil
}

// OnWrite sets the hook called for every write that changed the store (a
// create, an update, a delete accepted), after the change and before the
// answer is written: a test can SIGKILL an operator there (see
// [Operator.KillAt]), leaving a resource whose creator never learned its
// ID. The hook runs on the request's goroutine, possibly on several at
// once, and delays the answer until it returns; nil removes it.
func (s *System) OnWrite(hook func(Write)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onWrite = hook
}

// OnAnswer sets the hook called for every request once its answer is
// written and flushed to the client (or its connection reset, or its
// client gone: see [Request.Status]) and the request logged: a test can
// SIGKILL an operator there, after it got an answer and before it acted
// on it, or at its first read of a resource (see [Operator.Kill]). The
// hook runs on the request's goroutine, possibly on several at once; the
// connection is not reused until it returns. nil removes it.
func (s *System) OnAnswer(hook func(Answered)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onAns = hook
}

// authorized reports whether token is accepted.
func (s *System) authorized(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.auth {
		return true
	}
	for _, t := range s.tokens {
		if token != "" && subtle.ConstantTimeCompare(t, []byte(token)) == 1 {
			return true
		}
	}
	return false
}

package provider

import (
	"bytes"
	"cmp"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrNotFound is returned by the controls for a record that does not exist.
var ErrNotFound = errors.New("record not found")

// Options configure a [Server].
type Options struct {
	// Tokens are the bearer tokens the API accepts. With none, every API
	// request is answered 401.
	Tokens []string
	// Faults are injected from the start; see [Server.SetFaults].
	Faults Faults
}

// Server is the DNS provider: an [http.Handler] serving the API under /v1/
// and the controls under /admin/, and the same controls as methods. It is
// safe for concurrent use.
type Server struct {
	mux *http.ServeMux

	mu       sync.Mutex
	records  map[string]entry
	lastID   int
	tokens   [][]byte
	faults   *faultState
	onCreate func(Record)
	counts   counters
}

// entry is a stored record with its creation order.
type entry struct {
	Record
	seq int
}

// NewServer returns a provider with no records.
func NewServer(opts Options) *Server {
	s := &Server{mux: http.NewServeMux(), records: map[string]entry{}, counts: newCounters(time.Now())}
	s.SetTokens(opts.Tokens...)
	s.SetFaults(opts.Faults)
	s.mux.Handle("POST /v1/records", s.api(OpCreate, s.create))
	s.mux.Handle("GET /v1/records/{id}", s.api(OpGet, s.get))
	s.mux.Handle("PUT /v1/records/{id}", s.api(OpUpdate, s.update))
	s.mux.Handle("DELETE /v1/records/{id}", s.api(OpDelete, s.delete))
	s.mux.Handle("GET /v1/records", s.api(OpList, s.list))
	s.adminRoutes()
	return s
}

// ServeHTTP serves the API and the admin endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// SetTokens replaces the accepted bearer tokens: the old ones are refused
// from the next request on (a rotation).
func (s *Server) SetTokens(tokens ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = s.tokens[:0]
	for _, t := range tokens {
		if t != "" {
			s.tokens = append(s.tokens, []byte(t))
		}
	}
}

// SetFaults replaces the injected faults (the zero Faults: none) and
// reseeds their random source.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = newFaultState(f)
}

// Faults returns the injected faults.
func (s *Server) Faults() Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults.faults
}

// OnCreate sets a hook called for each record a create stored, after it is
// stored and before the answer is written: a test can kill the client
// there, leaving a record whose creator never learned its ID. The hook runs
// on the request's goroutine and delays the answer until it returns; nil
// removes it.
func (s *Server) OnCreate(hook func(Record)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onCreate = hook
}

// SetValue changes a record's value behind its client's back (drift).
func (s *Server) SetValue(id, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.records[id]
	if !ok {
		return fmt.Errorf("record %s: %w", id, ErrNotFound)
	}
	e.Value = value
	if err := e.Validate(); err != nil {
		return fmt.Errorf("record %s: %w", id, err)
	}
	s.records[id] = e
	return nil
}

// Remove deletes a record behind its client's back (drift). It is not
// counted in [Stats.Deletes].
func (s *Server) Remove(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.records[id]; !ok {
		return fmt.Errorf("record %s: %w", id, ErrNotFound)
	}
	delete(s.records, id)
	return nil
}

// Records returns the live records, oldest first.
func (s *Server) Records() []Record { return s.find(func(Record) bool { return true }) }

// Find returns the live records with tag, oldest first.
func (s *Server) Find(tag string) []Record {
	return s.find(func(r Record) bool { return r.Tag == tag })
}

func (s *Server) find(match func(Record) bool) []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	es := make([]entry, 0, len(s.records))
	for _, e := range s.records {
		if match(e.Record) {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]Record, len(es))
	for i, e := range es {
		out[i] = e.Record
	}
	return out
}

// Stats returns the counts since the start or the last ResetStats.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts.snapshot(time.Now())
}

// ResetStats starts a new count.
func (s *Server) ResetStats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts = newCounters(time.Now())
}

// answer is what an API handler answers: a status and a JSON body.
type answer struct {
	status int
	body   any
}

func errorAnswer(status int, msg string) answer {
	return answer{status, map[string]string{"error": msg}}
}

// api wraps an operation's handler with the request count, the faults and
// authentication.
func (s *Server) api(op Op, serve func(*http.Request) answer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.counts.perSecond[time.Now().Unix()]++
		p := s.faults.draw(op)
		retryAfter := s.faults.retryAfterSeconds()
		s.mu.Unlock()

		if p.delay > 0 {
			// Read the body first: net/http notices that the client left
			// (and cancels the request's context) only once it is read.
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
			if err != nil {
				s.answered(op, http.StatusBadRequest)
				writeJSON(w, errorAnswer(http.StatusBadRequest, "body: "+err.Error()))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			t := time.NewTimer(p.delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				s.answered(op, StatusClientGone)
				return
			}
		}
		var a answer
		switch {
		case p.fault == tooManyRequests:
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
			a = errorAnswer(http.StatusTooManyRequests, "rate limit exceeded, retry after "+strconv.Itoa(retryAfter)+"s")
		case p.fault == serverError:
			a = errorAnswer(p.status, strings.ToLower(http.StatusText(p.status)))
		case !s.authorized(r):
			w.Header().Set("WWW-Authenticate", `Bearer realm="dns"`)
			a = errorAnswer(http.StatusUnauthorized, "missing or invalid bearer token")
		default:
			a = serve(r)
			if p.fault == gatewayTimeout {
				a = errorAnswer(http.StatusGatewayTimeout, "gateway timeout")
			}
		}
		s.answered(op, a.status)
		writeJSON(w, a)
	})
}

func (s *Server) answered(op Op, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.answered(op, status)
}

func (s *Server) authorized(r *http.Request) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tokens {
		if subtle.ConstantTimeCompare(t, []byte(token)) == 1 {
			return true
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, a answer) {
	if a.body == nil {
		w.WriteHeader(a.status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	_ = json.NewEncoder(w).Encode(a.body)
}

// maxBody bounds a request's body.
const maxBody = 64 << 10

// decode reads r's JSON body into v, refusing unknown fields.
func decode(r *http.Request, v any) error {
	d := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxBody))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	return nil
}

func (s *Server) create(r *http.Request) answer {
	var rec Record
	if err := decode(r, &rec); err != nil {
		return errorAnswer(http.StatusBadRequest, err.Error())
	}
	if rec.ID != "" {
		return errorAnswer(http.StatusBadRequest, "id: assigned by the provider")
	}
	if err := rec.Validate(); err != nil {
		return errorAnswer(http.StatusBadRequest, err.Error())
	}
	s.mu.Lock()
	s.lastID++
	rec.ID = "rec-" + strconv.Itoa(s.lastID)
	s.records[rec.ID] = entry{Record: rec, seq: s.lastID}
	s.counts.creates++
	hook := s.onCreate
	s.mu.Unlock()
	if hook != nil {
		hook(rec)
	}
	return answer{http.StatusCreated, rec}
}

func (s *Server) get(r *http.Request) answer {
	id := r.PathValue("id")
	s.mu.Lock()
	e, ok := s.records[id]
	s.mu.Unlock()
	if !ok {
		return errorAnswer(http.StatusNotFound, "record "+id+" not found")
	}
	return answer{http.StatusOK, e.Record}
}

func (s *Server) update(r *http.Request) answer {
	id := r.PathValue("id")
	var rec Record
	if err := decode(r, &rec); err != nil {
		return errorAnswer(http.StatusBadRequest, err.Error())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.records[id]
	if !ok {
		return errorAnswer(http.StatusNotFound, "record "+id+" not found")
	}
	rec.ID, rec.Tag = id, e.Tag
	if err := rec.Validate(); err != nil {
		return errorAnswer(http.StatusBadRequest, err.Error())
	}
	e.Record = rec
	s.records[id] = e
	return answer{http.StatusOK, rec}
}

func (s *Server) delete(r *http.Request) answer {
	id := r.PathValue("id")
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.records[id]; !ok {
		return errorAnswer(http.StatusNotFound, "record "+id+" not found")
	}
	delete(s.records, id)
	s.counts.deletes++
	return answer{status: http.StatusNoContent}
}

// RecordList is the body of a list: GET /v1/records?tag=.
type RecordList struct {
	Records []Record `json:"resources"`
}

func (s *Server) list(r *http.Request) answer {
	q := r.URL.Query()
	if !q.Has("tag") {
		return answer{http.StatusOK, RecordList{Records: s.Records()}}
	}
	return answer{http.StatusOK, RecordList{Records: s.Find(q.Get("tag"))}}
}

package fakesystem

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// ErrNotFound is returned by the controls for a resource that does not
// exist.
var ErrNotFound = errors.New("resource not found")

// State is where a resource is in its life.
type State string

// The states of a resource. Only an asynchronous system ([Async]) shows
// the transient ones.
const (
	Ready    State = "ready"
	Creating State = "creating"
	Updating State = "updating"
	Deleting State = "deleting"
)

// Resource is one resource of the system: the JSON object its creator
// sent, with the ID and State the system keeps. Its JSON form is one flat
// object: {"id": ..., "tag": ..., "state": ..., and the creator's fields}.
type Resource struct {
	// ID is assigned by the system at create.
	ID string
	// Tag is the creator's key (the "tag" field of the create's body):
	// an owner or idempotency key it can find the resource by
	// (GET <collection>?tag=). The system does not refuse a second
	// resource with the same tag, as most real APIs do not: a client that
	// creates twice makes two resources, and a test can count them.
	Tag string
	// State is [Ready], or the transient state of an asynchronous write.
	State State
	// Fields are the body's other fields, as sent.
	Fields map[string]json.RawMessage
}

// MarshalJSON writes the flat JSON object the API serves.
func (r Resource) MarshalJSON() ([]byte, error) {
	m := maps.Clone(r.Fields)
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	for k, v := range map[string]string{"id": r.ID, "tag": r.Tag, "state": string(r.State)} {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		m[k] = b
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads the flat JSON object MarshalJSON writes.
func (r *Resource) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*r = Resource{}
	for k, dst := range map[string]*string{"id": &r.ID, "tag": &r.Tag, "state": (*string)(&r.State)} {
		if v, ok := m[k]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				return fmt.Errorf("field %q: %w", k, err)
			}
			delete(m, k)
		}
	}
	r.Fields = m
	return nil
}

// String is the resource's JSON form, for test messages.
func (r Resource) String() string {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Sprintf("resource %s: %v", r.ID, err)
	}
	return string(b)
}

// Decode decodes the resource's JSON form into v, a struct of the
// caller's, e.g. struct{ ID string; Size int64 }.
func (r Resource) Decode(v any) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// List is the body of GET <collection>: {"resources": [...]}, oldest
// first.
type List struct {
	Resources []Resource `json:"resources"`
}

// Write is a write that changed the store, as [System.OnWrite] sees it.
type Write struct {
	// Method is POST, PUT, PATCH or DELETE.
	Method string
	// Path is the request's path.
	Path string
	// Resource is the resource after the write; after a delete, as it
	// was, with State [Deleting].
	Resource Resource
}

// entry is a stored resource, with its creation order and the end of its
// transient state.
type entry struct {
	Resource
	seq   int
	until time.Time // when State becomes Ready, or the resource goes
}

// settle ends the transient states whose time has come; the caller holds
// s.mu.
func (s *System) settle(now time.Time) {
	for id, e := range s.res {
		if e.State == Ready || now.Before(e.until) {
			continue
		}
		if e.State == Deleting {
			delete(s.res, id)
			s.deleted++
			continue
		}
		e.State = Ready
	}
}

// answer is what an API handler answers: a status and a JSON body.
type answer struct {
	status int
	body   any
}

func errorAnswer(status int, msg string) answer {
	return answer{status, map[string]string{"error": msg}}
}

// maxBody bounds a request's body.
const maxBody = 1 << 20

func decodeBody(r *http.Request) (Resource, *answer) {
	var res Resource
	if err := json.NewDecoder(r.Body).Decode(&res); err != nil {
		a := errorAnswer(http.StatusBadRequest, "body: "+err.Error())
		return res, &a
	}
	return res, nil
}

func (s *System) create(r *http.Request) (answer, *Resource) {
	in, bad := decodeBody(r)
	if bad != nil {
		return *bad, nil
	}
	if in.ID != "" || in.State != "" {
		return errorAnswer(http.StatusBadRequest, "body: fields id and state are the system's"), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if bad := s.validate(in); bad != nil {
		return *bad, nil
	}
	s.lastID++
	e := &entry{Resource: in, seq: s.lastID}
	e.ID, e.State = s.prefix+strconv.Itoa(s.lastID), Ready
	status := http.StatusCreated
	if d := s.async.Create; d > 0 {
		e.State, e.until, status = Creating, time.Now().Add(d), http.StatusAccepted
	}
	s.res[e.ID] = e
	s.created++
	out := copyOf(e.Resource)
	return answer{status, out}, &out
}

func (s *System) list(r *http.Request) (answer, *Resource) {
	q := r.URL.Query()
	l := List{Resources: s.find(func(res Resource) bool { return !q.Has("tag") || res.Tag == q.Get("tag") })}
	return answer{http.StatusOK, l}, nil
}

func (s *System) get(r *http.Request) (answer, *Resource) {
	id := r.PathValue("id")
	got, err := s.Get(id)
	if err != nil {
		return errorAnswer(http.StatusNotFound, err.Error()), nil
	}
	return answer{http.StatusOK, got}, nil
}

// update serves PUT (the body replaces the fields) and PATCH (the body's
// fields replace those of the same name; null removes one). The tag stays.
func (s *System) update(r *http.Request) (answer, *Resource) {
	id := r.PathValue("id")
	in, bad := decodeBody(r)
	if bad != nil {
		return *bad, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, a := s.writable(id)
	if e == nil {
		return a, nil
	}
	fields := map[string]json.RawMessage{}
	if r.Method != http.MethodPut {
		fields = maps.Clone(e.Fields)
		if fields == nil {
			fields = map[string]json.RawMessage{}
		}
	}
	for k, v := range in.Fields {
		if string(v) == "null" {
			delete(fields, k)
			continue
		}
		fields[k] = v
	}
	next := e.Resource
	next.Fields = fields
	if bad := s.validate(next); bad != nil {
		return *bad, nil
	}
	e.Fields = fields
	status := http.StatusOK
	if d := s.async.Update; d > 0 {
		e.State, e.until, status = Updating, time.Now().Add(d), http.StatusAccepted
	}
	out := copyOf(e.Resource)
	return answer{status, out}, &out
}

func (s *System) delete(r *http.Request) (answer, *Resource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, a := s.writable(r.PathValue("id"))
	if e == nil {
		return a, nil
	}
	out := copyOf(e.Resource)
	out.State = Deleting
	if d := s.async.Delete; d > 0 {
		e.State, e.until = Deleting, time.Now().Add(d)
		return answer{http.StatusAccepted, out}, &out
	}
	delete(s.res, e.ID)
	s.deleted++
	return answer{status: http.StatusNoContent}, &out
}

// writable returns the entry with id if a write may change it, or else
// the answer: 404 when there is none, 409 while it is being deleted (as
// cloud APIs answer a second DELETE). The caller holds s.mu.
func (s *System) writable(id string) (*entry, answer) {
	s.settle(time.Now())
	e, ok := s.res[id]
	switch {
	case !ok:
		return nil, errorAnswer(http.StatusNotFound, "resource "+id+" not found")
	case e.State == Deleting:
		return nil, errorAnswer(http.StatusConflict, "resource "+id+" is being deleted")
	}
	return e, answer{}
}

// validate runs [Options.Validate] on the resource a write would store;
// it returns the 400 answer for one it refuses. The caller holds s.mu.
func (s *System) validate(r Resource) *answer {
	if s.valid == nil {
		return nil
	}
	if err := s.valid(copyOf(r)); err != nil {
		a := errorAnswer(http.StatusBadRequest, err.Error())
		return &a
	}
	return nil
}

func copyOf(r Resource) Resource {
	r.Fields = maps.Clone(r.Fields)
	return r
}

// Resources returns the resources the system holds (those being created
// or deleted too), oldest first.
func (s *System) Resources() []Resource { return s.find(func(Resource) bool { return true }) }

// Find returns the resources with tag, oldest first: more than one is a
// duplicate.
func (s *System) Find(tag string) []Resource {
	return s.find(func(r Resource) bool { return r.Tag == tag })
}

// Get returns the resource with id, or an error wrapping [ErrNotFound].
func (s *System) Get(id string) (Resource, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle(time.Now())
	e, ok := s.res[id]
	if !ok {
		return Resource{}, fmt.Errorf("resource %s: %w", id, ErrNotFound)
	}
	return copyOf(e.Resource), nil
}

func (s *System) find(match func(Resource) bool) []Resource {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle(time.Now())
	es := make([]*entry, 0, len(s.res))
	for _, e := range s.res {
		if match(e.Resource) {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(a, b *entry) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]Resource, len(es))
	for i, e := range es {
		out[i] = copyOf(e.Resource)
	}
	return out
}

// Set changes one field of a resource behind its client's back (drift):
// value is encoded as JSON; nil removes the field.
func (s *System) Set(id, field string, value any) error {
	b, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("resource %s: field %q: %w", id, field, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle(time.Now())
	e, ok := s.res[id]
	switch {
	case !ok:
		return fmt.Errorf("resource %s: %w", id, ErrNotFound)
	case field == "id" || field == "tag" || field == "state":
		return fmt.Errorf("resource %s: field %q is not the client's to change", id, field)
	case value == nil:
		delete(e.Fields, field)
	default:
		if e.Fields == nil {
			e.Fields = map[string]json.RawMessage{}
		}
		e.Fields[field] = b
	}
	return nil
}

// Remove deletes a resource at once behind its client's back (drift). It
// is not counted in [Stats.Deleted].
func (s *System) Remove(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.res[id]; !ok {
		return fmt.Errorf("resource %s: %w", id, ErrNotFound)
	}
	delete(s.res, id)
	return nil
}

package ops_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/widget"
)

// externalEnv is the base URL of the external system an operator keeps
// one resource per Widget in; set, the operator runs an
// external.Reconciler instead of Sync.
const externalEnv = "KOPGO_OPS_EXTERNAL_URL"

// externalPeriod is the external operators' drift period: the package's
// default, 5 minutes, divided by the real run's time scale. Each Ready
// object is observed once per period, about 0.07 reconciles a second, below
// KopgoHotLoop's 0.1.
const externalPeriod = 5 * time.Minute / timeScale

// externalRetryAfter is what the external system's 503s ask for: a failing
// object is retried no sooner (koperrors.FromHTTP's delay), so that it is
// not reconciled more often than a Ready one is checked.
const externalRetryAfter = externalPeriod

// remoteWidget is a Widget's resource in the external system.
type remoteWidget struct {
	ID   string `json:"id,omitempty"`
	Key  string `json:"key,omitempty"`
	Size int64  `json:"size"`
}

// fakeSystem is the system outside the cluster of the real run's external
// operators: an HTTP API in the test process, in memory, one resource per
// Widget, under a path per controller (/{system}/resources). A system
// given a failure interval n answers every n-th call 503 with Retry-After,
// before doing anything.
type fakeSystem struct {
	srv *httptest.Server

	mu        sync.Mutex
	resources map[string]map[string]remoteWidget // by system, by ID
	failEvery map[string]int
	calls     map[string]map[int]int // by system, by status answered
	nextID    int
}

// startFakeSystem serves a fakeSystem until the test ends; failEvery
// gives systems their failure interval.
func startFakeSystem(t *testing.T, failEvery map[string]int) *fakeSystem {
	t.Helper()
	s := &fakeSystem{resources: map[string]map[string]remoteWidget{}, failEvery: failEvery, calls: map[string]map[int]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{system}/resources", s.find)
	mux.HandleFunc("POST /{system}/resources", s.create)
	mux.HandleFunc("GET /{system}/resources/{id}", s.get)
	mux.HandleFunc("PUT /{system}/resources/{id}", s.update)
	mux.HandleFunc("DELETE /{system}/resources/{id}", s.remove)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the base URL of system.
func (s *fakeSystem) URL(system string) string { return s.srv.URL + "/" + system }

// fail counts a call of system and says whether it is one to fail, in
// which case it has answered 503; the caller holds s.mu.
func (s *fakeSystem) fail(w http.ResponseWriter, r *http.Request) bool {
	system := r.PathValue("system")
	if s.calls[system] == nil {
		s.calls[system] = map[int]int{}
		s.resources[system] = map[string]remoteWidget{}
	}
	n := 0
	for _, c := range s.calls[system] {
		n += c
	}
	if every := s.failEvery[system]; every > 0 && n%every == 0 {
		s.calls[system][http.StatusServiceUnavailable]++
		w.Header().Set("Retry-After", strconv.Itoa(int(externalRetryAfter.Seconds())))
		http.Error(w, "the widget service is overloaded", http.StatusServiceUnavailable)
		return true
	}
	return false
}

// reply answers status with v as JSON (none for nil).
func (s *fakeSystem) reply(w http.ResponseWriter, r *http.Request, status int, v any) {
	s.calls[r.PathValue("system")][status]++
	if v == nil {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *fakeSystem) find(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail(w, r) {
		return
	}
	found := []remoteWidget{}
	for _, res := range s.resources[r.PathValue("system")] {
		if res.Key == r.URL.Query().Get("key") {
			found = append(found, res)
		}
	}
	s.reply(w, r, http.StatusOK, found)
}

func (s *fakeSystem) create(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail(w, r) {
		return
	}
	var res remoteWidget
	if err := json.NewDecoder(r.Body).Decode(&res); err != nil {
		s.reply(w, r, http.StatusBadRequest, nil)
		return
	}
	s.nextID++
	res.ID = fmt.Sprint("w-", s.nextID)
	s.resources[r.PathValue("system")][res.ID] = res
	s.reply(w, r, http.StatusCreated, res)
}

func (s *fakeSystem) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail(w, r) {
		return
	}
	res, ok := s.resources[r.PathValue("system")][r.PathValue("id")]
	if !ok {
		s.reply(w, r, http.StatusNotFound, nil)
		return
	}
	s.reply(w, r, http.StatusOK, res)
}

func (s *fakeSystem) update(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail(w, r) {
		return
	}
	res, ok := s.resources[r.PathValue("system")][r.PathValue("id")]
	if !ok {
		s.reply(w, r, http.StatusNotFound, nil)
		return
	}
	var in remoteWidget
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		s.reply(w, r, http.StatusBadRequest, nil)
		return
	}
	res.Size = in.Size
	s.resources[r.PathValue("system")][res.ID] = res
	s.reply(w, r, http.StatusOK, res)
}

func (s *fakeSystem) remove(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail(w, r) {
		return
	}
	if _, ok := s.resources[r.PathValue("system")][r.PathValue("id")]; !ok {
		s.reply(w, r, http.StatusNotFound, nil)
		return
	}
	delete(s.resources[r.PathValue("system")], r.PathValue("id"))
	s.reply(w, r, http.StatusNoContent, nil)
}

// report says how many resources each system holds and how its calls
// were answered.
func (s *fakeSystem) report() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b bytes.Buffer
	for system, calls := range s.calls {
		fmt.Fprintf(&b, "  %-20s %2d resources, calls answered %v\n", system, len(s.resources[system]), calls)
	}
	return b.String()
}

// count is how many resources system holds and how many of its calls
// were answered status.
func (s *fakeSystem) count(system string, status int) (resources, calls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.resources[system]), s.calls[system][status]
}

// widgetClient is the operator's side: the external.Client (and
// external.Finder) of a Widget's resource, over HTTP, every failed answer
// read by koperrors.FromHTTP (a 503 is Unavailable, retried no sooner than
// its Retry-After).
type widgetClient struct{ url string }

var externalHTTP = &http.Client{Timeout: 5 * time.Second}

// connectWidgets is the external.Reconciler's connect: one client for
// every Widget, to the system at url.
func connectWidgets(url string) func(context.Context, *widget.Widget, *reconciler.Env) (external.Client[*widget.Widget], error) {
	return func(context.Context, *widget.Widget, *reconciler.Env) (external.Client[*widget.Widget], error) {
		return &widgetClient{url: url}, nil
	}
}

func (c *widgetClient) Observe(ctx context.Context, w *widget.Widget, id string) (external.Observation, error) {
	var got remoteWidget
	err := c.call(ctx, http.MethodGet, "/resources/"+url.PathEscape(id), nil, &got)
	if koperrors.KindOf(err) == koperrors.NotFound {
		return external.Observation{}, nil
	}
	if err != nil {
		return external.Observation{}, err
	}
	return external.Observation{Exists: true, UpToDate: got.Size == w.Spec.Size}, nil
}

func (c *widgetClient) Create(ctx context.Context, w *widget.Widget, key string) (string, error) {
	var made remoteWidget
	err := c.call(ctx, http.MethodPost, "/resources", remoteWidget{Key: key, Size: w.Spec.Size}, &made)
	return made.ID, err
}

func (c *widgetClient) Update(ctx context.Context, w *widget.Widget, id string) error {
	return c.call(ctx, http.MethodPut, "/resources/"+url.PathEscape(id), remoteWidget{Size: w.Spec.Size}, nil)
}

func (c *widgetClient) Delete(ctx context.Context, _ *widget.Widget, id string) error {
	return c.call(ctx, http.MethodDelete, "/resources/"+url.PathEscape(id), nil, nil)
}

func (c *widgetClient) Find(ctx context.Context, _ *widget.Widget, key string) (string, error) {
	var found []remoteWidget
	if err := c.call(ctx, http.MethodGet, "/resources?key="+url.QueryEscape(key), nil, &found); err != nil || len(found) == 0 {
		return "", err
	}
	return found[0].ID, nil
}

// call sends one request; any answer but 2xx is koperrors.FromHTTP's error.
func (c *widgetClient) call(ctx context.Context, method, path string, in, out any) error {
	var body bytes.Buffer
	if in != nil {
		if err := json.NewEncoder(&body).Encode(in); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url+path, &body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := externalHTTP.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if err := koperrors.FromHTTP(resp); err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

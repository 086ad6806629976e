package fakesystem_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kopgo/kopgo/test/testkit/fakesystem"
)

// reply is what a call got: the status (0 for a transport error), the
// Retry-After header and the body decoded as a Resource.
type reply struct {
	status     int
	retryAfter string
	res        fakesystem.Resource
	err        error
}

// do sends one request with token ("" none) and a JSON body ("" none).

func do(ctx context.Context, t *testing.T, sys *fakesystem.System, method, path, token, body string) reply {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, sys.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer func() { _ = resp.Body.Close() }()
	r := reply{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	data, _ := io.ReadAll(resp.Body)
	if len(data) > 0 && !strings.Contains(path, "?") && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, &r.res); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
	return r
}

func statuses(t *testing.T, sys *fakesystem.System, n int, method, path, body string) []int {
	t.Helper()
	out := make([]int, n)
	for i := range out {
		out[i] = do(t.Context(), t, sys, method, path, "", body).status
	}
	return out
}

func TestCRUD(t *testing.T) {
	sys := fakesystem.Start(t, fakesystem.Options{Path: "/v2/dbs", IDPrefix: "db-"})
	created := do(t.Context(), t, sys, http.MethodPost, "/v2/dbs", "", `{"tag": "k1", "size": 1, "name": "a"}`)
	want := fakesystem.Resource{ID: "db-1", Tag: "k1", State: fakesystem.Ready,
		Fields: map[string]json.RawMessage{"size": json.RawMessage("1"), "name": json.RawMessage(`"a"`)}}
	if created.status != http.StatusCreated || !cmp.Equal(created.res, want) {
		t.Fatalf("create: %d, -want +got:\n%s", created.status, cmp.Diff(want, created.res))
	}
	if r := do(t.Context(), t, sys, http.MethodPut, "/v2/dbs/db-1", "", `{"size": 2}`); r.status != http.StatusOK {
		t.Errorf("PUT: %d", r.status)
	}
	if r := do(t.Context(), t, sys, http.MethodPatch, "/v2/dbs/db-1", "", `{"name": "b", "size": null}`); r.status != http.StatusOK {
		t.Errorf("PATCH: %d", r.status)
	}
	var got struct {
		ID, Tag, Name string
		Size          *int
	}
	res, err := sys.Get("db-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Decode(&got); err != nil || got.ID != "db-1" || got.Tag != "k1" || got.Name != "b" || got.Size != nil {
		t.Errorf("after PUT and PATCH: %+v, %v; want the tag kept, size removed, name b", got, err)
	}
	do(t.Context(), t, sys, http.MethodPost, "/v2/dbs", "", `{"tag": "k2"}`)
	if n := len(sys.Find("k1")); n != 1 {
		t.Errorf("Find(k1): %d resources, want 1", n)
	}
	if r := do(t.Context(), t, sys, http.MethodDelete, "/v2/dbs/db-1", "", ""); r.status != http.StatusNoContent {
		t.Errorf("DELETE: %d", r.status)
	}
	gone := []int{http.StatusNotFound, http.StatusNotFound, http.StatusNotFound}
	if got := []int{
		do(t.Context(), t, sys, http.MethodGet, "/v2/dbs/db-1", "", "").status,
		do(t.Context(), t, sys, http.MethodPut, "/v2/dbs/db-1", "", "{}").status,
		do(t.Context(), t, sys, http.MethodDelete, "/v2/dbs/db-1", "", "").status,
	}; !cmp.Equal(got, gone) {
		t.Errorf("GET, PUT, DELETE after the delete: %v, want %v", got, gone)
	}
	for _, body := range []string{`{"id": "mine"}`, `{"state": "ready"}`, `{"tag": 7}`, `not json`} {
		if r := do(t.Context(), t, sys, http.MethodPost, "/v2/dbs", "", body); r.status != http.StatusBadRequest {
			t.Errorf("create %s: %d, want 400", body, r.status)
		}
	}
	if st := sys.Stats(); st.Created != 2 || st.Deleted != 1 {
		t.Errorf("Stats: created %d, deleted %d; want 2, 1", st.Created, st.Deleted)
	}
}

func TestTokensRotateAndRevoke(t *testing.T) {
	sys := fakesystem.Start(t, fakesystem.Options{Tokens: []string{"a", "b"}})
	call := func(token string) int {
		return do(t.Context(), t, sys, http.MethodGet, "/v1/resources", token, "").status
	}
	steps := []struct {
		what   string
		change func()
		want   map[string]int // by token
	}{
		{"start", func() {}, map[string]int{"": 401, "a": 200, "b": 200, "c": 401}},
		{"revoke a", func() { sys.Revoke("a") }, map[string]int{"": 401, "a": 401, "b": 200, "c": 401}},
		{"rotate to c", func() { sys.SetTokens("c") }, map[string]int{"": 401, "a": 401, "b": 401, "c": 200}},
		{"none", func() { sys.SetTokens() }, map[string]int{"": 401, "a": 401, "b": 401, "c": 401}},
	}
	for _, s := range steps {
		s.change()
		got := map[string]int{}
		for tok := range s.want {
			got[tok] = call(tok)
		}
		if d := cmp.Diff(s.want, got); d != "" {
			t.Errorf("%s: status by token, -want +got:\n%s", s.what, d)
		}
	}
	tokens := map[string]int{}
	for _, r := range sys.Requests() {
		tokens[r.Token]++
	}
	if d := cmp.Diff(map[string]int{"": 4, "a": 4, "b": 4, "c": 4}, tokens); d != "" {
		t.Errorf("logged tokens, -want +got:\n%s", d)
	}
}

// cancelOnceSent returns a context that ends once the request is written.

func TestAsync(t *testing.T) {
	sys := fakesystem.Start(t, fakesystem.Options{Async: fakesystem.Async{Create: time.Hour, Update: time.Hour, Delete: time.Hour}})
	var got []string
	add := func(r reply) { got = append(got, fmt.Sprint(r.status, " ", r.res.State)) }
	add(do(t.Context(), t, sys, http.MethodPost, "/v1/resources", "", `{"tag": "k"}`))
	add(do(t.Context(), t, sys, http.MethodGet, "/v1/resources/res-1", "", ""))
	add(do(t.Context(), t, sys, http.MethodPut, "/v1/resources/res-1", "", `{"size": 2}`))
	add(do(t.Context(), t, sys, http.MethodDelete, "/v1/resources/res-1", "", ""))
	add(do(t.Context(), t, sys, http.MethodGet, "/v1/resources/res-1", "", ""))
	add(do(t.Context(), t, sys, http.MethodDelete, "/v1/resources/res-1", "", ""))
	add(do(t.Context(), t, sys, http.MethodPatch, "/v1/resources/res-1", "", `{}`))
	want := []string{"202 creating", "200 creating", "202 updating", "202 deleting", "200 deleting", "409 ", "409 "}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("status and state through an asynchronous life, -want +got:\n%s", d)
	}

	if err := sys.SetAsync(fakesystem.Async{Create: time.Millisecond, Delete: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	add(do(t.Context(), t, sys, http.MethodPost, "/v1/resources", "", `{"tag": "k2"}`))
	eventually(t, "res-2 ready", func() error {
		if r := do(t.Context(), t, sys, http.MethodGet, "/v1/resources/res-2", "", ""); r.res.State != fakesystem.Ready {
			return fmt.Errorf("%d %q", r.status, r.res.State)
		}
		return nil
	})
	add(do(t.Context(), t, sys, http.MethodDelete, "/v1/resources/res-2", "", ""))
	eventually(t, "res-2 gone", func() error {
		if r := do(t.Context(), t, sys, http.MethodGet, "/v1/resources/res-2", "", ""); r.status != http.StatusNotFound {
			return fmt.Errorf("%d %q", r.status, r.res.State)
		}
		return nil
	})
	if st := sys.Stats(); st.Created != 2 || st.Deleted != 1 {
		t.Errorf("created %d, deleted %d; want 2 and 1 (res-1 is still being deleted)", st.Created, st.Deleted)
	}
	if err := sys.SetAsync(fakesystem.Async{Update: -time.Second}); err == nil || !strings.Contains(err.Error(), "Async.Update") {
		t.Errorf("SetAsync with a negative Update: %v, want an error naming Async.Update", err)
	}
}

func TestOnWriteRunsBetweenTheWriteAndItsAnswer(t *testing.T) {
	sys := fakesystem.Start(t, fakesystem.Options{Tokens: []string{"t"}})
	var (
		mu     sync.Mutex
		writes []string
	)
	// While the hook of the create runs, its client gets no byte of an
	// answer; it gives up inside the hook (as a killed operator would) and
	// has only its own cancellation. The 200 ms wait cannot fail a correct
	// system: it gives a wrong one, that answers before the hook, time to
	// show it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var firstByte atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotFirstResponseByte: func() { firstByte.Store(true) }})
	inHook, answered := make(chan struct{}), make(chan struct{})
	sys.OnWrite(func(w fakesystem.Write) {
		_, err := sys.Get(w.Resource.ID)
		mu.Lock()
		writes = append(writes, fmt.Sprintf("%s %s %s stored:%v", w.Method, w.Resource.ID, w.Resource.State, err == nil))
		mu.Unlock()
		if w.Method == http.MethodPost {
			close(inHook)
			<-answered // the client is done before the answer
		}
	})
	var r reply
	go func() { r = do(ctx, t, sys, http.MethodPost, "/v1/resources", "t", `{"tag": "k"}`); close(answered) }()
	<-inHook
	time.Sleep(200 * time.Millisecond)
	if firstByte.Load() {
		t.Error("the client got an answer while the hook ran")
	}
	cancel()
	<-answered
	if !errors.Is(r.err, context.Canceled) || r.status != 0 {
		t.Errorf("create whose client left in the hook: %d %v, want no answer (context.Canceled)", r.status, r.err)
	}
	if n := len(sys.Find("k")); n != 1 {
		t.Errorf("%d resources stored by the create, want 1", n)
	}
	do(t.Context(), t, sys, http.MethodGet, "/v1/resources/res-1", "t", "")
	do(t.Context(), t, sys, http.MethodPut, "/v1/resources/res-1", "t", `{}`)
	do(t.Context(), t, sys, http.MethodPut, "/v1/resources/res-1", "wrong", `{}`)
	do(t.Context(), t, sys, http.MethodPut, "/v1/resources/res-9", "t", `{}`)
	do(t.Context(), t, sys, http.MethodDelete, "/v1/resources/res-1", "t", "")
	want := []string{"POST res-1 ready stored:true", "PUT res-1 ready stored:true", "DELETE res-1 deleting stored:false"}
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff(want, writes); d != "" {
		t.Errorf("hook calls (none for a read, a 401 or a 404), -want +got:\n%s", d)
	}
}

func TestConcurrentCreatesAndStats(t *testing.T) {
	sys := fakesystem.Start(t, fakesystem.Options{})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			do(context.Background(), t, sys, http.MethodPost, "/v1/resources", "", fmt.Sprintf(`{"tag": "k%d"}`, i))
			do(context.Background(), t, sys, http.MethodGet, "/v1/resources", "", "")
		})
	}
	wg.Wait()
	ids := map[string]bool{}
	for _, r := range sys.Resources() {
		ids[r.ID] = true
	}
	st := sys.Stats()
	if len(ids) != 50 || st.Created != 50 || st.Requests != 100 {
		t.Errorf("%d distinct IDs, created %d, requests %d; want 50, 50, 100", len(ids), st.Created, st.Requests)
	}
	if d := cmp.Diff(map[string]int{"POST": 50, "GET": 50}, st.ByMethod); d != "" {
		t.Errorf("ByMethod, -want +got:\n%s", d)
	}
	// The log is in the order of the answers, Time is the arrival: the
	// span is from the earliest arrival to the latest.
	first, last := int64(math.MaxInt64), int64(0)
	for _, r := range sys.Requests() {
		first, last = min(first, r.Time.Unix()), max(last, r.Time.Unix())
	}
	seconds := last - first + 1
	if st.PeakPerSecond*int(seconds) < 100 || st.PeakPerSecond > 100 {
		t.Errorf("peak %d/s for 100 requests over %d clock seconds", st.PeakPerSecond, seconds)
	}
	sys.ResetLog()
	if st := sys.Stats(); st.Requests != 0 || st.Created != 0 || len(sys.Resources()) != 50 {
		t.Errorf("after ResetLog: %+v with %d resources; want zero counts, the 50 resources kept", st, len(sys.Resources()))
	}
}

func TestDrift(t *testing.T) {
	sys := fakesystem.Start(t, fakesystem.Options{})
	do(t.Context(), t, sys, http.MethodPost, "/v1/resources", "", `{"tag": "k", "size": 1}`)
	if err := sys.Set("res-1", "size", 5); err != nil {
		t.Fatal(err)
	}
	if r := do(t.Context(), t, sys, http.MethodGet, "/v1/resources/res-1", "", ""); string(r.res.Fields["size"]) != "5" {
		t.Errorf("size after Set: %s, want 5", r.res.Fields["size"])
	}
	if err := sys.Remove("res-1"); err != nil {
		t.Fatal(err)
	}
	if r := do(t.Context(), t, sys, http.MethodGet, "/v1/resources/res-1", "", ""); r.status != http.StatusNotFound {
		t.Errorf("GET after Remove: %d", r.status)
	}
	if err := sys.Remove("res-1"); !errors.Is(err, fakesystem.ErrNotFound) {
		t.Errorf("second Remove: %v", err)
	}
	if st := sys.Stats(); st.Deleted != 0 {
		t.Errorf("Remove counted as a delete: %d", st.Deleted)
	}
}

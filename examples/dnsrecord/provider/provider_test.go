package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kopgo/kopgo/examples/dnsrecord/provider"
)

const token = "t0ken"

// reply is an API answer as a test sees it.
type reply struct {
	status int
	header http.Header
	body   string
}

// call sends one API request with the bearer token tok ("" for none).
func call(t *testing.T, base, tok, method, path, body string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, string(b)}
}

func decodeRecord(t *testing.T, body string) provider.Record {
	t.Helper()
	var r provider.Record
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("decode %q: %v", body, err)
	}
	return r
}

func serve(t *testing.T, opts provider.Options) (*provider.Server, string) {
	t.Helper()
	s := provider.NewServer(opts)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts.URL
}

const www = `{"zone":"example.com","name":"www","type":"A","value":"192.0.2.1","ttl":300,"tag":"uid-1"}`

// Each API call against a provider holding one record, rec-1 (tag uid-1),
// and one of another tag, rec-2.
func TestAPI(t *testing.T) {
	stored := provider.Record{ID: "rec-1", Zone: "example.com", Name: "www", Type: "A", Value: "192.0.2.1", TTL: 300, Tag: "uid-1"}
	other := provider.Record{ID: "rec-2", Zone: "example.com", Name: "@", Type: "TXT", Value: "v=spf1 -all", TTL: 60, Tag: "uid-2"}
	for _, tc := range []struct {
		name, method, path, body string
		wantStatus               int
		wantBody                 string // a substring
		wantRecords              []provider.Record
	}{
		{name: "create", method: "POST", path: "/v1/records",
			body:       `{"zone":"example.org","name":"api","type":"CNAME","value":"lb.example.net.","ttl":60,"tag":"uid-3"}`,
			wantStatus: 201, wantBody: `"id":"rec-3"`,
			wantRecords: []provider.Record{stored, other, {ID: "rec-3", Zone: "example.org", Name: "api", Type: "CNAME", Value: "lb.example.net.", TTL: 60, Tag: "uid-3"}}},
		{name: "create with a tag in use makes a second record", method: "POST", path: "/v1/records", body: www,
			wantStatus: 201, wantBody: `"id":"rec-3"`,
			wantRecords: []provider.Record{stored, other, {ID: "rec-3", Zone: "example.com", Name: "www", Type: "A", Value: "192.0.2.1", TTL: 300, Tag: "uid-1"}}},
		{name: "create AAAA", method: "POST", path: "/v1/records",
			body:       `{"zone":"example.com","name":"v6","type":"AAAA","value":"2001:db8::1","ttl":1}`,
			wantStatus: 201, wantBody: `"value":"2001:db8::1"`},
		{name: "create with an unknown type", method: "POST", path: "/v1/records",
			body: `{"zone":"example.com","name":"www","type":"MX","value":"mx.example.com","ttl":300}`, wantStatus: 400, wantBody: `type: \"MX\"`},
		{name: "create A with an IPv6 value", method: "POST", path: "/v1/records",
			body: `{"zone":"example.com","name":"www","type":"A","value":"2001:db8::1","ttl":300}`, wantStatus: 400, wantBody: "not an IPv4 address"},
		{name: "create AAAA with an IPv4 value", method: "POST", path: "/v1/records",
			body: `{"zone":"example.com","name":"www","type":"AAAA","value":"192.0.2.1","ttl":300}`, wantStatus: 400, wantBody: "not an IPv6 address"},
		{name: "create with a bad name", method: "POST", path: "/v1/records",
			body: `{"zone":"example.com","name":"a b","type":"A","value":"192.0.2.1","ttl":300}`, wantStatus: 400, wantBody: "name:"},
		{name: "create with a TTL of 0", method: "POST", path: "/v1/records",
			body: `{"zone":"example.com","name":"www","type":"A","value":"192.0.2.1","ttl":0}`, wantStatus: 400, wantBody: "ttl:"},
		{name: "create with an ID", method: "POST", path: "/v1/records",
			body: `{"id":"mine","zone":"example.com","name":"www","type":"A","value":"192.0.2.1","ttl":300}`, wantStatus: 400, wantBody: "assigned by the provider"},
		{name: "create with an unknown field", method: "POST", path: "/v1/records",
			body: `{"zone":"example.com","name":"www","type":"A","value":"192.0.2.1","ttl":300,"priority":1}`, wantStatus: 400, wantBody: "unknown field"},
		{name: "create with no body", method: "POST", path: "/v1/records", wantStatus: 400, wantBody: "body:"},
		{name: "get", method: "GET", path: "/v1/records/rec-1", wantStatus: 200, wantBody: `"value":"192.0.2.1"`},
		{name: "get a missing record", method: "GET", path: "/v1/records/rec-9", wantStatus: 404, wantBody: "rec-9 not found"},
		{name: "update keeps the ID and the tag", method: "PUT", path: "/v1/records/rec-1",
			body:       `{"zone":"example.com","name":"www","type":"A","value":"192.0.2.2","ttl":60,"tag":"ignored"}`,
			wantStatus: 200, wantBody: `"tag":"uid-1"`,
			wantRecords: []provider.Record{{ID: "rec-1", Zone: "example.com", Name: "www", Type: "A", Value: "192.0.2.2", TTL: 60, Tag: "uid-1"}, other}},
		{name: "update with a bad value", method: "PUT", path: "/v1/records/rec-1",
			body: `{"zone":"example.com","name":"www","type":"A","value":"x","ttl":60}`, wantStatus: 400, wantBody: "value:"},
		{name: "update a missing record", method: "PUT", path: "/v1/records/rec-9", body: www, wantStatus: 404},
		{name: "delete", method: "DELETE", path: "/v1/records/rec-1", wantStatus: 204, wantRecords: []provider.Record{other}},
		{name: "delete a missing record", method: "DELETE", path: "/v1/records/rec-9", wantStatus: 404},
		{name: "list by tag", method: "GET", path: "/v1/records?tag=uid-2", wantStatus: 200, wantBody: `{"resources":[{"id":"rec-2",`},
		{name: "list by a tag no record has", method: "GET", path: "/v1/records?tag=uid-9", wantStatus: 200, wantBody: `{"resources":[]}`},
		{name: "list all", method: "GET", path: "/v1/records", wantStatus: 200, wantBody: `"id":"rec-2"`},
		{name: "an unknown path", method: "GET", path: "/v2/records", wantStatus: 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, url := serve(t, provider.Options{Tokens: []string{token}})
			for _, body := range []string{www, `{"zone":"example.com","name":"@","type":"TXT","value":"v=spf1 -all","ttl":60,"tag":"uid-2"}`} {
				if r := call(t, url, token, "POST", "/v1/records", body); r.status != 201 {
					t.Fatalf("setup: %d %s", r.status, r.body)
				}
			}
			r := call(t, url, token, tc.method, tc.path, tc.body)
			if r.status != tc.wantStatus || !strings.Contains(r.body, tc.wantBody) {
				t.Errorf("%s %s = %d %s, want %d with %q", tc.method, tc.path, r.status, r.body, tc.wantStatus, tc.wantBody)
			}
			if tc.wantRecords != nil {
				if diff := cmp.Diff(tc.wantRecords, s.Records()); diff != "" {
					t.Errorf("records (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestAuthentication(t *testing.T) {
	for _, tc := range []struct {
		name          string
		tokens        []string
		authorization string
		want          int
	}{
		{name: "the token", tokens: []string{token}, authorization: "Bearer " + token, want: 200},
		{name: "the second of two tokens", tokens: []string{"old", token}, authorization: "Bearer " + token, want: 200},
		{name: "no header", tokens: []string{token}, want: 401},
		{name: "a wrong token", tokens: []string{token}, authorization: "Bearer nope", want: 401},
		{name: "a prefix of the token", tokens: []string{token}, authorization: "Bearer t0k", want: 401},
		{name: "an empty bearer token", tokens: []string{token}, authorization: "Bearer ", want: 401},
		{name: "basic auth", tokens: []string{token}, authorization: "Basic dDA6a2Vu", want: 401},
		{name: "no tokens configured", authorization: "Bearer " + token, want: 401},
		{name: "an empty token configured", tokens: []string{""}, authorization: "Bearer ", want: 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, url := serve(t, provider.Options{Tokens: tc.tokens})
			req, err := http.NewRequestWithContext(t.Context(), "GET", url+"/v1/records", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.authorization != "" {
				req.Header.Set("Authorization", tc.authorization)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status = %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("a 401 without WWW-Authenticate")
			}
		})
	}
}

// A rotation refuses the old token from the next request on.
func TestSetTokensRotates(t *testing.T) {
	s, url := serve(t, provider.Options{Tokens: []string{"old"}})
	if r := call(t, url, "old", "GET", "/v1/records", ""); r.status != 200 {
		t.Fatalf("old token before the rotation: %d", r.status)
	}
	s.SetTokens("new")
	if r := call(t, url, "old", "GET", "/v1/records", ""); r.status != 401 {
		t.Errorf("old token after the rotation: %d, want 401", r.status)
	}
	if r := call(t, url, "new", "GET", "/v1/records", ""); r.status != 200 {
		t.Errorf("new token: %d, want 200", r.status)
	}
}

// The exclusive fault rates are met within a few percent over 2000
// requests, with the statuses and headers each fault promises.
func TestFaultRates(t *testing.T) {
	s, url := serve(t, provider.Options{Tokens: []string{token}, Faults: provider.Faults{
		Seed: 7, TooManyRequests: 0.1, RetryAfter: 1500 * time.Millisecond, ServerError: 0.2, GatewayTimeout: 0.1,
	}})
	const n = 2000
	got := map[int]int{}
	for range n {
		r := call(t, url, token, "POST", "/v1/records", www)
		got[r.status]++
		switch r.status {
		case 429:
			if ra := r.header.Get("Retry-After"); ra != "2" {
				t.Fatalf("Retry-After = %q, want 2 (1.5s rounded up)", ra)
			}
		case 201, 500, 502, 503, 504:
		default:
			t.Fatalf("unexpected answer %d %s", r.status, r.body)
		}
	}
	near := func(name string, count int, rate float64) {
		if want := rate * n; float64(count) < want*0.8 || float64(count) > want*1.2 {
			t.Errorf("%s: %d of %d, want about %.0f", name, count, n, want)
		}
	}
	near("429", got[429], 0.1)
	near("5xx", got[500]+got[502]+got[503], 0.2)
	near("504", got[504], 0.1)
	near("201", got[201], 0.6)
	for _, code := range []int{500, 502, 503} {
		if got[code] == 0 {
			t.Errorf("no %d among the server errors: %v", code, got)
		}
	}
	// A 504 was served: its record is stored and counted.
	st := s.Stats()
	if want := got[201] + got[504]; st.Creates != want || len(s.Records()) != want {
		t.Errorf("creates = %d, records = %d, want %d (201s and 504s)", st.Creates, len(s.Records()), want)
	}
	if diff := cmp.Diff(got, st.Requests[provider.OpCreate]); diff != "" {
		t.Errorf("Stats.Requests[create] (-client saw +provider counted):\n%s", diff)
	}
}

// The same seed gives the same faults to the same sequence of requests.
func TestFaultSeedRepeats(t *testing.T) {
	run := func() []int {
		_, url := serve(t, provider.Options{Tokens: []string{token}, Faults: provider.Faults{Seed: 42, ServerError: 0.5}})
		var out []int
		for range 50 {
			out = append(out, call(t, url, token, "GET", "/v1/records", "").status)
		}
		return out
	}
	if a, b := run(), run(); !cmp.Equal(a, b) {
		t.Errorf("two runs with seed 42 differ:\n%v\n%v", a, b)
	}
}

func TestFaultsOnlyOnTheirOps(t *testing.T) {
	_, url := serve(t, provider.Options{Tokens: []string{token}, Faults: provider.Faults{Ops: []provider.Op{provider.OpCreate}, ServerError: 1}})
	if r := call(t, url, token, "POST", "/v1/records", www); r.status < 500 {
		t.Errorf("create = %d, want a 5xx", r.status)
	}
	if r := call(t, url, token, "GET", "/v1/records", ""); r.status != 200 {
		t.Errorf("list = %d, want 200 (faults only on create)", r.status)
	}
}

// Faults come before authentication, as at a gateway: a throttled client
// with a bad token sees 429.
func TestFaultsBeforeAuthentication(t *testing.T) {
	_, url := serve(t, provider.Options{Tokens: []string{token}, Faults: provider.Faults{TooManyRequests: 1}})
	if r := call(t, url, "wrong", "GET", "/v1/records", ""); r.status != 429 {
		t.Errorf("status = %d, want 429", r.status)
	}
}

func TestLatency(t *testing.T) {
	s, url := serve(t, provider.Options{Tokens: []string{token}, Faults: provider.Faults{Latency: 1, Delay: 100 * time.Millisecond, Jitter: 50 * time.Millisecond}})
	start := time.Now()
	if r := call(t, url, token, "GET", "/v1/records", ""); r.status != 200 {
		t.Fatalf("status = %d", r.status)
	}
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Errorf("took %v, want at least the 100ms delay", took)
	}

	// A client that gives up during the delay: the create is not served.
	s.SetFaults(provider.Faults{Latency: 1, Delay: time.Minute})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/v1/records", strings.NewReader(www))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_ = resp.Body.Close()
		t.Fatalf("a delayed create answered %d before the client's deadline", resp.StatusCode)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().Requests[provider.OpCreate][provider.StatusClientGone] != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("requests = %v, want one create counted %d", s.Stats().Requests, provider.StatusClientGone)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(s.Records()); n != 0 {
		t.Errorf("%d records stored by a create whose client left during the delay, want 0", n)
	}
}

// The hook runs when the record is stored and before the client has the
// answer.
func TestOnCreate(t *testing.T) {
	s, url := serve(t, provider.Options{Tokens: []string{token}})
	inHook := make(chan provider.Record)
	release := make(chan struct{})
	s.OnCreate(func(r provider.Record) {
		inHook <- r
		<-release
	})
	answered := make(chan reply, 1)
	go func() { answered <- call(t, url, token, "POST", "/v1/records", www) }()

	hooked := <-inHook
	if got := s.Find("uid-1"); len(got) != 1 || got[0] != hooked {
		t.Errorf("in the hook, Find(uid-1) = %v, want the hooked record %v stored", got, hooked)
	}
	select {
	case r := <-answered:
		t.Fatalf("the client was answered (%d) while the hook ran", r.status)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	r := <-answered
	if r.status != 201 || decodeRecord(t, r.body) != hooked {
		t.Errorf("answer %d %s, want 201 with %v", r.status, r.body, hooked)
	}

	s.OnCreate(nil)
	if r := call(t, url, token, "POST", "/v1/records", www); r.status != 201 {
		t.Errorf("after the hook's removal: %d", r.status)
	}
}

func TestDrift(t *testing.T) {
	s, url := serve(t, provider.Options{Tokens: []string{token}})
	id := decodeRecord(t, call(t, url, token, "POST", "/v1/records", www).body).ID

	if err := s.SetValue(id, "198.51.100.7"); err != nil {
		t.Fatal(err)
	}
	if got := decodeRecord(t, call(t, url, token, "GET", "/v1/records/"+id, "").body).Value; got != "198.51.100.7" {
		t.Errorf("value after drift = %q", got)
	}
	if err := s.SetValue(id, "not-an-ip"); err == nil || !strings.Contains(err.Error(), "IPv4") {
		t.Errorf("SetValue with a bad value = %v, want an IPv4 error", err)
	}
	if err := s.Remove(id); err != nil {
		t.Fatal(err)
	}
	if r := call(t, url, token, "GET", "/v1/records/"+id, ""); r.status != 404 {
		t.Errorf("get after Remove = %d, want 404", r.status)
	}
	for name, err := range map[string]error{"SetValue": s.SetValue(id, "192.0.2.1"), "Remove": s.Remove(id)} {
		if !errors.Is(err, provider.ErrNotFound) {
			t.Errorf("%s of a missing record = %v, want ErrNotFound", name, err)
		}
	}
	if d := s.Stats().Deletes; d != 0 {
		t.Errorf("Deletes = %d, want 0 (Remove is drift, not an API delete)", d)
	}
}

func TestStats(t *testing.T) {
	s, url := serve(t, provider.Options{Tokens: []string{token}})
	id := decodeRecord(t, call(t, url, token, "POST", "/v1/records", www).body).ID
	call(t, url, token, "GET", "/v1/records/"+id, "")
	call(t, url, token, "GET", "/v1/records/nope", "")
	call(t, url, "bad", "GET", "/v1/records/"+id, "")
	call(t, url, token, "DELETE", "/v1/records/"+id, "")
	call(t, url, token, "GET", "/admin/records", "") // not counted

	st := s.Stats()
	want := map[provider.Op]map[int]int{
		provider.OpCreate: {201: 1},
		provider.OpGet:    {200: 1, 404: 1, 401: 1},
		provider.OpDelete: {204: 1},
	}
	if diff := cmp.Diff(want, st.Requests); diff != "" {
		t.Errorf("Requests (-want +got):\n%s", diff)
	}
	if st.Creates != 1 || st.Deletes != 1 || st.Total() != 5 || st.Total(provider.OpGet) != 3 {
		t.Errorf("creates %d, deletes %d, total %d, gets %d; want 1, 1, 5, 3", st.Creates, st.Deletes, st.Total(), st.Total(provider.OpGet))
	}
	sum := 0
	for _, n := range st.PerSecond {
		sum += n
	}
	if sum != 5 || st.Peak() < 1 || len(st.PerSecond) < 1 || len(st.PerSecond) > 3 {
		t.Errorf("PerSecond = %v (peak %d), want 5 requests within a second or two", st.PerSecond, st.Peak())
	}

	s.ResetStats()
	if st := s.Stats(); st.Total() != 0 || st.Creates != 0 || st.Peak() != 0 || !st.Since.After(time.Now().Add(-time.Second)) {
		t.Errorf("after ResetStats: %+v", st)
	}
}

// Concurrent creates get distinct IDs, and every one is counted.
func TestConcurrentCreates(t *testing.T) {
	s, url := serve(t, provider.Options{Tokens: []string{token}})
	const n = 50
	var wg sync.WaitGroup
	ids := make(chan string, n)
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf(`{"zone":"example.com","name":"h%d","type":"A","value":"192.0.2.1","ttl":300,"tag":"uid-%d"}`, i, i)
			req, _ := http.NewRequestWithContext(t.Context(), "POST", url+"/v1/records", bytes.NewBufferString(body))
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer func() { _ = resp.Body.Close() }()
			var r provider.Record
			_ = json.NewDecoder(resp.Body).Decode(&r)
			ids <- r.ID
		})
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if id == "" || seen[id] {
			t.Errorf("ID %q empty or given twice", id)
		}
		seen[id] = true
	}
	if len(seen) != n || len(s.Records()) != n || s.Stats().Creates != n {
		t.Errorf("%d IDs, %d records, %d creates; want %d each", len(seen), len(s.Records()), s.Stats().Creates, n)
	}
}

package fakesystem_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kopgo/kopgo/test/testkit/fakesystem"
)

// validTTL refuses a resource without a positive "ttl", as a DNS API
// refuses a record's body.
func validTTL(r fakesystem.Resource) error {
	var body struct{ TTL *int }
	if err := r.Decode(&body); err != nil {
		return err
	}
	if body.TTL == nil || *body.TTL <= 0 {
		return errors.New("ttl: want a positive number of seconds")
	}
	return nil
}

func TestValidateAnswers400AndStoresNothing(t *testing.T) {
	sys := fakesystem.Start(t, fakesystem.Options{Validate: validTTL})
	var got []string
	call := func(method, path, body string) {
		r := do(t.Context(), t, sys, method, path, "", body)
		got = append(got, fmt.Sprint(method, " ", body, ": ", r.status))
	}
	call(http.MethodPost, "/v1/resources", `{"tag": "k", "ttl": 0}`)
	call(http.MethodPost, "/v1/resources", `{"tag": "k"}`)
	call(http.MethodPost, "/v1/resources", `{"tag": "k", "ttl": 60}`)
	call(http.MethodPatch, "/v1/resources/res-1", `{"ttl": -1}`)
	call(http.MethodPatch, "/v1/resources/res-1", `{"ttl": null}`)
	call(http.MethodPut, "/v1/resources/res-1", `{"name": "a"}`)
	call(http.MethodPut, "/v1/resources/res-1", `{"ttl": 30, "name": "a"}`)
	call(http.MethodPatch, "/v1/resources/res-1", `{"name": "b"}`)
	want := []string{
		`POST {"tag": "k", "ttl": 0}: 400`, `POST {"tag": "k"}: 400`, `POST {"tag": "k", "ttl": 60}: 201`,
		`PATCH {"ttl": -1}: 400`, `PATCH {"ttl": null}: 400`, `PUT {"name": "a"}: 400`,
		`PUT {"ttl": 30, "name": "a"}: 200`, `PATCH {"name": "b"}: 200`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("answers, -want +got:\n%s", d)
	}
	res := sys.Resources()
	if len(res) != 1 || res[0].ID != "res-1" || string(res[0].Fields["ttl"]) != "30" || string(res[0].Fields["name"]) != `"b"` {
		t.Errorf("resources after the refused writes: %v, want res-1 alone with ttl 30 and name b", res)
	}
	if st := sys.Stats(); st.Created != 1 {
		t.Errorf("created %d, want 1 (a refused create stores nothing)", st.Created)
	}

	// The refusal carries the validator's message, for the client to show.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, sys.CollectionURL(), strings.NewReader(`{"tag": "k"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct{ Error string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Error != "ttl: want a positive number of seconds" {
		t.Errorf("400 body: %+v, %v; want the validator's message", body, err)
	}
}

func TestOnAnswerRunsOnceTheClientHasItsAnswer(t *testing.T) {
	sys := fakesystem.Start(t, fakesystem.Options{})
	if err := sys.Inject(fakesystem.Fault{Method: http.MethodGet, Path: "/v1/resources/res-9", Status: 503}); err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		seen []string
	)
	inHook, release := make(chan struct{}), make(chan struct{})
	sys.OnAnswer(func(a fakesystem.Answered) {
		id := "<none>"
		if a.Resource != nil {
			id = a.Resource.ID
		}
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s %d %s injected:%v", a.Method, a.Path, a.Status, id, a.Injected))
		mu.Unlock()
		if a.Method == http.MethodPost {
			close(inHook)
			<-release // the client has its answer while the hook holds
		}
	})
	created := make(chan reply, 1)
	go func() { created <- do(t.Context(), t, sys, http.MethodPost, "/v1/resources", "", `{"tag": "k"}`) }()
	<-inHook
	// A bound for a stuck test, not a timing assertion: a system that runs
	// the hook before the answer never lets the client finish.
	select {
	case r := <-created:
		if r.status != http.StatusCreated || r.res.ID != "res-1" {
			t.Errorf("create answered while the hook ran: %d %s, want 201 res-1", r.status, r.res.ID)
		}
	case <-time.After(30 * time.Second):
		t.Error("the client got no answer while the hook ran")
	}
	if n := sys.Count(http.MethodPost, ""); n != 1 {
		t.Errorf("create logged %d times when the hook ran, want 1", n)
	}
	close(release)

	do(t.Context(), t, sys, http.MethodGet, "/v1/resources/res-1", "", "")
	do(t.Context(), t, sys, http.MethodGet, "/v1/resources", "", "")
	do(t.Context(), t, sys, http.MethodGet, "/v1/resources/res-9", "", "")
	do(t.Context(), t, sys, http.MethodGet, "/v1/resources/res-8", "", "")
	do(t.Context(), t, sys, http.MethodDelete, "/v1/resources/res-1", "", "")
	sys.OnAnswer(nil)
	do(t.Context(), t, sys, http.MethodGet, "/v1/resources/res-1", "", "")
	want := []string{
		"POST /v1/resources 201 res-1 injected:false",
		"GET /v1/resources/res-1 200 res-1 injected:false",
		"GET /v1/resources 200 <none> injected:false",
		"GET /v1/resources/res-9 503 <none> injected:true",
		"GET /v1/resources/res-8 404 <none> injected:false",
		"DELETE /v1/resources/res-1 204 <none> injected:false",
	}
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff(want, seen); d != "" {
		t.Errorf("hook calls (none after OnAnswer(nil)), -want +got:\n%s", d)
	}
}

// Pending names the requests not answered yet, so that a test can wait
// for the one it means (a hung create) among others in flight.
func TestPendingNamesTheUnansweredRequests(t *testing.T) {
	sys := fakesystem.Start(t, fakesystem.Options{})
	if err := sys.Inject(fakesystem.Fault{Method: http.MethodPost, Hang: true},
		fakesystem.Fault{Method: http.MethodGet, Path: "/v1/resources/slow", Hang: true}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { do(ctx, t, sys, http.MethodGet, "/v1/resources/slow", "", "") })
	wg.Go(func() { do(ctx, t, sys, http.MethodPost, "/v1/resources", "", `{"tag": "k"}`) })
	do(t.Context(), t, sys, http.MethodGet, "/v1/resources", "", "") // answered: not pending
	eventually(t, "the GET and the POST pending", func() error {
		got := map[string]int{}
		for _, r := range sys.Pending() {
			got[fmt.Sprint(r.Method, " ", r.Path, " ", r.Status)]++
		}
		if want := map[string]int{"GET /v1/resources/slow 0": 1, "POST /v1/resources 0": 1}; !cmp.Equal(got, want) {
			return fmt.Errorf("pending %v, want %v", got, want)
		}
		return nil
	})
	cancel()
	wg.Wait()
	eventually(t, "nothing pending", func() error {
		if p := sys.Pending(); len(p) != 0 {
			return fmt.Errorf("pending %v", p)
		}
		return nil
	})
}

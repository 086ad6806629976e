package fakesystem_test

import (
	"context"
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

func TestScriptedFaults(t *testing.T) {
	sys := fakesystem.Start(t, fakesystem.Options{})
	do(t.Context(), t, sys, http.MethodPost, "/v1/resources", "", `{}`)
	err := sys.Inject(
		fakesystem.Fault{Method: http.MethodGet, Path: "/v1/resources/*", Skip: 1, Times: 2, Status: 503, RetryAfter: 1500 * time.Millisecond},
		fakesystem.Fault{Method: http.MethodGet, Times: 1, RetryAfter: time.Second},
	)
	if err != nil {
		t.Fatal(err)
	}
	got := statuses(t, sys, 5, http.MethodGet, "/v1/resources/res-1", "")
	if want := []int{429, 503, 503, 200, 200}; !cmp.Equal(got, want) {
		t.Errorf("GET item: %v, want %v (the first skips fault 0 and meets fault 1, then fault 0 twice)", got, want)
	}
	if got := statuses(t, sys, 2, http.MethodGet, "/v1/resources", ""); !cmp.Equal(got, []int{200, 200}) {
		t.Errorf("GET collection: %v, want both 200 (both faults spent)", got)
	}
	sys.ClearFaults()
	if err := sys.Inject(fakesystem.Fault{Status: 418, RetryAfter: 1500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if r := do(t.Context(), t, sys, http.MethodDelete, "/v1/resources/res-1", "", ""); r.status != 418 || r.retryAfter != "2" {
		t.Errorf("DELETE: %d Retry-After %q, want 418 and 2 (seconds rounded up)", r.status, r.retryAfter)
	}
	if _, err := sys.Get("res-1"); err != nil {
		t.Errorf("a request answered by a fault was served: %v", err)
	}
	if n := sys.Count(http.MethodGet, "/v1/resources/*"); n != 5 {
		t.Errorf("Count(GET, item): %d, want 5", n)
	}
}

func TestRateIsSeeded(t *testing.T) {
	run := func(seed uint64) []int {
		sys := fakesystem.Start(t, fakesystem.Options{Seed: seed})
		if err := sys.Inject(fakesystem.Fault{Rate: 0.3, Status: 500}); err != nil {
			t.Fatal(err)
		}
		return statuses(t, sys, 400, http.MethodGet, "/v1/resources", "")
	}
	a, b, c := run(7), run(7), run(8)
	if !cmp.Equal(a, b) {
		t.Error("two systems with seed 7 failed different requests")
	}
	if cmp.Equal(a, c) {
		t.Error("seeds 7 and 8 failed the same requests")
	}
	failed := 0
	for _, s := range a {
		if s == 500 {
			failed++
		}
	}
	if failed < 80 || failed > 160 { // 120 expected; 4 standard deviations either side
		t.Errorf("%d of 400 requests failed at rate 0.3", failed)
	}
}

func TestLostAnswer(t *testing.T) {
	sys := fakesystem.Start(t, fakesystem.Options{})
	err := sys.Inject(
		fakesystem.Fault{Method: http.MethodPost, Times: 1, LoseAnswer: true},
		fakesystem.Fault{Method: http.MethodPost, Times: 1, LoseAnswer: true, Status: 504},
		fakesystem.Fault{Method: http.MethodPost, Times: 1, LoseAnswer: true, Reset: true},
		fakesystem.Fault{Method: http.MethodPost, Times: 1, Reset: true},
	)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 4 {
		r := do(t.Context(), t, sys, http.MethodPost, "/v1/resources", "", `{"tag": "k"}`)
		got = append(got, fmt.Sprint(r.status, " ", r.err != nil))
	}
	if want := []string{"502 false", "504 false", "0 true", "0 true"}; !cmp.Equal(got, want) {
		t.Errorf("status and transport error of 4 creates: %v, want %v", got, want)
	}
	if n := len(sys.Find("k")); n != 3 {
		t.Errorf("%d resources stored, want 3 (the lost answers' writes happened, the reset before serving did not)", n)
	}
	// A reset request is logged once its handler returns, which may be
	// after the client saw the reset.
	eventually(t, "4 requests logged", func() error {
		logged := map[int]int{}
		for _, r := range sys.Requests() {
			logged[r.Status]++
		}
		if want := map[int]int{502: 1, 504: 1, 0: 2}; !cmp.Equal(logged, want) {
			return fmt.Errorf("logged statuses %v, want %v", logged, want)
		}
		return nil
	})
}

func TestHangEndsWithTheClient(t *testing.T) {
	sys := fakesystem.Start(t, fakesystem.Options{})
	if err := sys.Inject(fakesystem.Fault{Method: http.MethodPost, Hang: true}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	answered := make(chan reply, 1)
	go func() { answered <- do(ctx, t, sys, http.MethodPost, "/v1/resources", "", `{"tag": "k"}`) }()
	eventually(t, "the create hangs", func() error {
		if n := sys.InFlight(); n != 1 {
			return fmt.Errorf("%d requests in flight", n)
		}
		return nil
	})
	cancel()
	if r := <-answered; !errors.Is(r.err, context.Canceled) {
		t.Errorf("hung create: %d %v, want context.Canceled", r.status, r.err)
	}
	eventually(t, "the hung request logged", func() error {
		if log := sys.Requests(); len(log) != 1 || log[0].Status != fakesystem.StatusClientGone || !log[0].Injected {
			return fmt.Errorf("log %+v", log)
		}
		return nil
	})
	if n, in := sys.Stats().Created, sys.InFlight(); n != 0 || in != 0 {
		t.Errorf("a hung create stored %d resources; %d requests in flight after it", n, in)
	}
}

func TestCloseEndsHungRequests(t *testing.T) {
	sys, err := fakesystem.New(fakesystem.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sys.Inject(fakesystem.Fault{Hang: true, Times: 1}, fakesystem.Fault{Latency: time.Hour}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { _ = do(context.Background(), t, sys, http.MethodGet, "/v1/resources", "", "") })
	}
	eventually(t, "a hung and a delayed request", func() error {
		if n := sys.InFlight(); n != 2 {
			return fmt.Errorf("%d requests in flight", n)
		}
		return nil
	})
	sys.Close() // returns only once both requests ended
	wg.Wait()
	sys.Close() // idempotent
	if n := sys.InFlight(); n != 0 {
		t.Errorf("%d requests in flight after Close", n)
	}
}

func TestBadInputNamesTheField(t *testing.T) {
	sys := fakesystem.Start(t, fakesystem.Options{})
	for _, c := range []struct {
		f    fakesystem.Fault
		want string
	}{
		{fakesystem.Fault{Rate: 1.5}, "Rate 1.5"},
		{fakesystem.Fault{Status: 42}, "Status 42"},
		{fakesystem.Fault{Times: -1}, "Times -1"},
		{fakesystem.Fault{Latency: -time.Second}, "Latency -1s"},
		{fakesystem.Fault{Hang: true, Status: 500}, "Hang"},
		{fakesystem.Fault{Reset: true, Status: 500}, "Reset with Status 500"},
		{fakesystem.Fault{Method: "GET", Path: "[", Status: 500}, `fault 1 (GET "[")`},
	} {
		err := sys.Inject(fakesystem.Fault{Status: 500}, c.f)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Inject(%+v): %v, want an error with %q", c.f, err, c.want)
		}
	}
	if r := do(t.Context(), t, sys, http.MethodGet, "/v1/resources", "", ""); r.status != http.StatusOK {
		t.Errorf("a refused Inject added faults: %d", r.status)
	}
	for _, p := range []string{"v1/x", "/v1/x/", "/v1/{x}"} {
		if _, err := fakesystem.New(fakesystem.Options{Path: p}); err == nil || !strings.Contains(err.Error(), "Path") {
			t.Errorf("New with Path %q: %v, want an error naming Path", p, err)
		}
	}
	if err := sys.Set("res-1", "size", 1); !errors.Is(err, fakesystem.ErrNotFound) {
		t.Errorf("Set of a missing resource: %v", err)
	}
	do(t.Context(), t, sys, http.MethodPost, "/v1/resources", "", `{"tag": "k"}`)
	if err := sys.Set("res-1", "tag", "other"); err == nil || !strings.Contains(err.Error(), `field "tag"`) {
		t.Errorf("Set of the tag: %v, want an error naming the field", err)
	}
}

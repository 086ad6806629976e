package external_test

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/observability"
)

// answer is a provider's HTTP answer with code and Retry-After ("":
// none), read by koperrors.FromHTTP.
func answer(code int, retryAfter string) error {
	resp := &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)), Header: http.Header{},
		Body: http.NoBody, Request: &http.Request{Method: http.MethodPost, URL: &url.URL{Scheme: "https", Host: "cloud.example.com", Path: "/v1/buckets"}}}
	if retryAfter != "" {
		resp.Header.Set("Retry-After", retryAfter)
	}
	return koperrors.FromHTTP(resp)
}

// createTimes records when each key's creates came.
type createTimes struct {
	mu    sync.Mutex
	times map[string][]time.Time
}

func (c *createTimes) add(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.times[key] = append(c.times[key], time.Now())
	return len(c.times[key])
}

func (c *createTimes) of(key string) []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.times[key]...)
}

// A create answered 429 with Retry-After 2 s is not called again before
// the 2 s have passed, whatever the pending mark's writes wake. Before,
// the second create came 59 to 79 ms after the first (the echo of the
// mark's removal started the next reconcile at once).
func TestCreateRetryAfterHolds(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	times := &createTimes{times: map[string][]time.Time{}}
	s.createFails = func(key string) error {
		if times.add(key) == 1 {
			return answer(http.StatusTooManyRequests, "2")
		}
		return nil
	}
	ws := newWidgets(t, ns, 3, nil)
	start(t, "ext-retry-after", ns, external.New(connectTo(noFinder{finder{s}})), &observability.FakeRecorder{})
	allReady(t, ws, 30*time.Second)
	for _, key := range keysOf(ws) {
		ts := times.of(key)
		if len(ts) != 2 {
			t.Errorf("%s: %d creates, want 2", key, len(ts))
			continue
		}
		if gap := ts[1].Sub(ts[0]); gap < 2*time.Second {
			t.Errorf("%s: second create %s after the first, within its Retry-After of 2 s", key, gap.Round(time.Millisecond))
		}
	}
}

// A create refused with a 401 (terminal: Stalled Unauthorized) is called
// once for the object's generation, not again: before, 54 calls in 5 s,
// each round two writes of the pending mark and a Warning event.
func TestRefusedCreateIsCalledOnce(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	times := &createTimes{times: map[string][]time.Time{}}
	s.createFails = func(key string) error {
		times.add(key)
		return answer(http.StatusUnauthorized, "")
	}
	ws := newWidgets(t, ns, 2, nil)
	rec := &observability.FakeRecorder{}
	start(t, "ext-refused", ns, external.New(connectTo(noFinder{finder{s}})), rec)
	eventually(t, 30*time.Second, "both refused", func() error {
		for _, key := range keysOf(ws) {
			if len(times.of(key)) == 0 {
				return fmt.Errorf("%s not tried yet", key)
			}
		}
		return nil
	})
	time.Sleep(5 * time.Second)
	for _, key := range keysOf(ws) {
		if n := len(times.of(key)); n != 1 {
			t.Errorf("%s: %d creates in 5 s after a 401, want 1", key, n)
		}
	}
}

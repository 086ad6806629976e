package apply

import (
	"context"
	"net/http"
	"sync/atomic"
)

// exchange is the slot a request's context carries to [statusRecorder]: the
// status code of the last response and the number of requests sent (client-go
// may retry, for example after a 429 with Retry-After).
type exchange struct {
	status   atomic.Int32
	requests atomic.Int32
}

type exchangeKey struct{}

func withExchange(ctx context.Context) (context.Context, *exchange) {
	x := &exchange{}
	return context.WithValue(ctx, exchangeKey{}, x), x
}

// statusRecorder writes the HTTP status of each response into the exchange
// its request's context carries. The status is the only exact signal of a
// create: the API server answers an apply that creates with 201 Created and
// one to an existing object with 200 OK (k8s.io/apiserver's patch handler).
type statusRecorder struct{ next http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (s statusRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	x, _ := r.Context().Value(exchangeKey{}).(*exchange)
	if x != nil {
		x.requests.Add(1)
	}
	resp, err := s.next.RoundTrip(r)
	if x != nil && err == nil {
		x.status.Store(int32(resp.StatusCode))
	}
	return resp, err
}

// recordingHTTPClient returns a copy of hc whose transport records statuses.
func recordingHTTPClient(hc *http.Client) *http.Client {
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	out := *hc
	out.Transport = statusRecorder{next: next}
	return &out
}

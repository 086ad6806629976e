package testkit

import (
	"io"
	"net/http"
	"sync/atomic"

	"k8s.io/client-go/rest"
)

// Traffic counts the requests sent and the response bytes received by the
// clients made from one [Cluster.CountedConfig]: how tests assert that an
// operation sent one request, or none, and that a steady state sends no
// write (reads are Requests minus Writes).
type Traffic struct {
	// Requests is the number of HTTP requests sent, writes included.
	Requests atomic.Int64
	// Writes is the number of those requests that were writes ([IsWrite]:
	// POST, PUT, PATCH or DELETE; a server-side apply is a PATCH).
	Writes atomic.Int64
	// Bytes is the number of response body bytes read.
	Bytes atomic.Int64
}

// Reset zeroes the counters, as after a warm-up (the first use of a client
// sends discovery requests).
func (t *Traffic) Reset() {
	t.Requests.Store(0)
	t.Writes.Store(0)
	t.Bytes.Store(0)
}

// CountedConfig returns a copy of the admin Config whose traffic is counted.
func (c *Cluster) CountedConfig() (*rest.Config, *Traffic) {
	t := &Traffic{}
	cfg := rest.CopyConfig(c.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return countingTransport{next: rt, traffic: t}
	}
	return cfg, t
}

type countingTransport struct {
	next    http.RoundTripper
	traffic *Traffic
}

func (ct countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ct.traffic.Requests.Add(1)
	if IsWrite(r) {
		ct.traffic.Writes.Add(1)
	}
	resp, err := ct.next.RoundTrip(r)
	if err == nil {
		resp.Body = countingBody{ReadCloser: resp.Body, n: &ct.traffic.Bytes}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

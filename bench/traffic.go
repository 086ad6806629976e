package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// traffic counts what one operator sends, as its client sees it: every
// HTTP request, the mutating ones among them, and event writes (kept apart:
// kopgo's controllers record events, the baselines do not).
type traffic struct {
	requests, writes, events atomic.Int64
	// waited sums the time of every request that is not a watch or an
	// event write, in nanoseconds.
	waited atomic.Int64

	// latency sums the time of each kind of request (method, and for a GET
	// whether it is a list or a watch), for -v.
	mu      sync.Mutex
	latency map[string]*latencySum
	// sent lists each request (not event writes) as "VERB resource",
	// while logging is on.
	logging atomic.Bool
	sent    []string
}

// logRequests starts listing each request.
func (t *traffic) logRequests() {
	t.mu.Lock()
	t.sent = t.sent[:0]
	t.mu.Unlock()
	t.logging.Store(true)
}

// requestsSince returns the requests listed after the first n, as
// "VERB resource" (a subresource after a slash).
func (t *traffic) requestsSince(n int64) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n >= int64(len(t.sent)) {
		return nil
	}
	return slices.Clone(t.sent[n:])
}

// describe names a request by its verb and resource: "PATCH
// widgets/status", "GET configmaps".
func describe(r *http.Request) string {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	resource := ""
	// .../namespaces/<ns>/<resource>[/<name>[/<subresource>]]
	for i := 0; i+2 < len(parts); i++ {
		if parts[i] == "namespaces" {
			resource = parts[i+2]
			if i+4 < len(parts) {
				resource += "/" + parts[i+4]
			}
			break
		}
	}
	verb := r.Method
	if r.Method == http.MethodPatch && r.Header.Get("Content-Type") == "application/apply-patch+yaml" {
		verb = "APPLY"
	}
	return verb + " " + resource
}

type latencySum struct {
	n   int
	sum time.Duration
	max time.Duration
}

func (t *traffic) observe(kind string, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.latency == nil {
		t.latency = map[string]*latencySum{}
	}
	l := t.latency[kind]
	if l == nil {
		l = &latencySum{}
		t.latency[kind] = l
	}
	l.n++
	l.sum += d
	l.max = max(l.max, d)
}

// writeMean returns the mean time of the write requests (event writes
// apart), 0 when there were none.
func (t *traffic) writeMean() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	var n int
	var sum time.Duration
	for k, l := range t.latency {
		switch k {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			n += l.n
			sum += l.sum
		}
	}
	if n == 0 {
		return 0
	}
	return sum / time.Duration(n)
}

// latencies describes the requests' times per kind.
func (t *traffic) latencies() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for k, l := range t.latency {
		out = append(out, fmt.Sprintf("%s n=%d mean=%s max=%s", k, l.n, (l.sum/time.Duration(l.n)).Round(10*time.Microsecond), l.max.Round(10*time.Microsecond)))
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

type trafficCount struct {
	requests, writes, events int64
	waited                   time.Duration
}

func (t *traffic) snapshot() trafficCount {
	return trafficCount{t.requests.Load(), t.writes.Load(), t.events.Load(), time.Duration(t.waited.Load())}
}

func (c trafficCount) sub(o trafficCount) trafficCount {
	return trafficCount{c.requests - o.requests, c.writes - o.writes, c.events - o.events, c.waited - o.waited}
}

func (c trafficCount) add(o trafficCount) trafficCount {
	return trafficCount{c.requests + o.requests, c.writes + o.writes, c.events + o.events, c.waited + o.waited}
}

// counted returns a copy of cfg with unlimited client QPS whose requests
// are counted.
func counted(cfg *rest.Config) (*rest.Config, *traffic) {
	t := &traffic{}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			switch {
			case strings.Contains(r.URL.Path, "/events"):
				t.events.Add(1)
			case r.Method == http.MethodGet || r.Method == http.MethodHead:
				t.requests.Add(1)
			default:
				t.requests.Add(1)
				t.writes.Add(1)
			}
			if t.logging.Load() && !strings.Contains(r.URL.Path, "/events") {
				d := describe(r)
				t.mu.Lock()
				t.sent = append(t.sent, d)
				t.mu.Unlock()
			}
			if r.URL.Query().Get("watch") == "true" {
				return rt.RoundTrip(r)
			}
			kind := r.Method
			if r.Method == http.MethodGet && r.URL.Query().Has("fieldSelector") {
				kind += "-fieldSelector"
			}
			if strings.Contains(r.URL.Path, "/events") {
				kind = "event-" + kind
			}
			start := time.Now()
			resp, err := rt.RoundTrip(r)
			took := time.Since(start)
			t.observe(kind, took)
			if !strings.Contains(r.URL.Path, "/events") {
				t.waited.Add(int64(took))
			}
			return resp, err
		})
	}
	return cfg, t
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// benchResources are the resources whose apiserver_request_total counts are
// summed: the workload's, and nothing the control plane writes on its own.
var benchResources = map[string]bool{"configmaps": true, "secrets": true, "services": true, "widgets": true}

var labelRE = regexp.MustCompile(`(\w+)="([^"]*)"`)

// serverWrites scrapes the API server's /metrics and returns the number of
// mutating requests (POST, PUT, PATCH, APPLY, DELETE) it has served on the
// workload's resources since it started.
func serverWrites(ctx context.Context, cs kubernetes.Interface) (int64, error) {
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("scrape API server metrics: %w", err)
	}
	var total float64
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		labels := map[string]string{}
		for _, m := range labelRE.FindAllStringSubmatch(line[:end], -1) {
			labels[m[1]] = m[2]
		}
		if !benchResources[labels["resource"]] {
			continue
		}
		switch labels["verb"] {
		case "POST", "PUT", "PATCH", "APPLY", "DELETE":
		default:
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			return 0, fmt.Errorf("parse %q: %w", line, err)
		}
		total += v
	}
	return int64(total), sc.Err()
}

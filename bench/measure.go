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

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kopgo/kopgo/test/widget"
)

// traffic counts what one operator sends, as its client sees it: every
// HTTP request, the mutating ones among them, and event writes (kept apart:
// kopgo's controllers record events, the baselines do not).
type traffic struct {
	requests, writes, events atomic.Int64

	// latency sums the time of each kind of request (method, and for a GET
	// whether it is a list or a watch), for -v.
	mu      sync.Mutex
	latency map[string]*latencySum
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

type trafficCount struct{ requests, writes, events int64 }

func (t *traffic) snapshot() trafficCount {
	return trafficCount{t.requests.Load(), t.writes.Load(), t.events.Load()}
}

func (c trafficCount) sub(o trafficCount) trafficCount {
	return trafficCount{c.requests - o.requests, c.writes - o.writes, c.events - o.events}
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
			t.observe(kind, time.Since(start))
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

// ---------------------------------------------------------------------------

// observer watches one namespace with its own (admin, uncounted) cache and
// tells when every Widget is Ready with all three children, and when the
// children of one Widget carry a given value.
type observer struct {
	n     int
	cache cache.Cache
	stop  context.CancelFunc

	mu        sync.Mutex
	ready     map[string]bool
	children  map[string]map[string]bool // kind -> names
	converged chan struct{}
	pending   map[string]*pendingChange
}

type pendingChange struct {
	want string
	seen map[string]bool
	done chan struct{}
}

var childKinds = []string{"ConfigMap", "Secret", "Service"}

func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *corev1.ConfigMap:
		return "ConfigMap"
	case *corev1.Secret:
		return "Secret"
	case *corev1.Service:
		return "Service"
	}
	return ""
}

func startObserver(ctx context.Context, cfg *rest.Config, ns string, n int) (*observer, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: widget.Scheme(), DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		return nil, err
	}
	o := &observer{n: n, cache: c, ready: map[string]bool{}, children: map[string]map[string]bool{},
		converged: make(chan struct{}), pending: map[string]*pendingChange{}}
	for _, k := range childKinds {
		o.children[k] = map[string]bool{}
	}
	ctx, cancel := context.WithCancel(ctx)
	o.stop = cancel
	for _, obj := range []client.Object{&widget.Widget{}, &corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Service{}} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			cancel()
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { o.seen(obj) },
			UpdateFunc: func(_, obj any) { o.seen(obj) },
		}); err != nil {
			cancel()
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("observer cache of %s did not sync", ns)
	}
	return o, nil
}

func (o *observer) seen(obj any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch x := obj.(type) {
	case *widget.Widget:
		c := apimeta.FindStatusCondition(x.Status.Conditions, "Ready")
		o.ready[x.Name] = c != nil && c.Status == metav1.ConditionTrue && x.Status.ObservedGeneration == x.Generation
	case client.Object:
		k := kindOf(x)
		if k == "" {
			return
		}
		o.children[k][x.GetName()] = true
		if p := o.pending[x.GetName()]; p != nil {
			if v, ok := sizeOf(x); ok && v == p.want && !p.seen[k] {
				p.seen[k] = true
				if len(p.seen) == len(childKinds) {
					close(p.done)
					delete(o.pending, x.GetName())
				}
			}
		}
	}
	o.checkConverged()
}

func (o *observer) checkConverged() {
	select {
	case <-o.converged:
		return
	default:
	}
	ready := 0
	for _, r := range o.ready {
		if r {
			ready++
		}
	}
	if ready < o.n {
		return
	}
	for _, k := range childKinds {
		if len(o.children[k]) < o.n {
			return
		}
	}
	close(o.converged)
}

// expect registers that the children of Widget name will carry want; the
// channel closes when all three do.
func (o *observer) expect(name, want string) <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := &pendingChange{want: want, seen: map[string]bool{}, done: make(chan struct{})}
	o.pending[name] = p
	return p.done
}

// ---------------------------------------------------------------------------

// activity follows one controller's reconciles: which parents it has
// started, how many are running, and when the last one ended.
type activity struct {
	controller string
	// afterStop runs once the manager stopped (the recorder's Shutdown:
	// a manager given to Builder.Setup does not stop the recorder itself).
	afterStop []func()
	mu        sync.Mutex
	started   map[string]bool
	calls     map[string]int
	inflight  int
	last      time.Time
}

func newActivity(controller string) *activity {
	return &activity{controller: controller, started: map[string]bool{}, calls: map[string]int{}, last: time.Now()}
}

func (a *activity) begin(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.started[name] = true
	a.calls[name]++
	a.inflight++
}

func (a *activity) end() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inflight--
	a.last = time.Now()
}

// quietFor is how long a controller must have been idle, with an empty
// queue, to count as done.
const quietFor = 500 * time.Millisecond

// waitQuiet waits until at least n parents were reconciled, no reconcile
// is running, none ended in the last quietFor and the controller's
// workqueue is empty. It returns when the condition first held.
func (a *activity) waitQuiet(ctx context.Context, n int) (time.Time, error) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var allSeen time.Time
	for {
		a.mu.Lock()
		seen, inflight, last := len(a.started), a.inflight, a.last
		a.mu.Unlock()
		if seen >= n && allSeen.IsZero() {
			allSeen = time.Now()
		}
		if seen >= n && inflight == 0 && time.Since(last) > quietFor && queueDepth(a.controller) == 0 {
			return last, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("controller %s: %d of %d parents reconciled, %d running: %w", a.controller, seen, n, inflight, ctx.Err())
		case <-tick.C:
		}
	}
}

// queueDepth reads controller-runtime's workqueue_depth of a controller.
func queueDepth(controller string) float64 {
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		return 0
	}
	for _, mf := range mfs {
		if mf.GetName() != "workqueue_depth" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == controller {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return 0
}

// summary describes the controller's work so far, for -v: reconciles in
// all and per parent, and controller-runtime's reconcile results and
// workqueue retries.
func (a *activity) summary() string {
	a.mu.Lock()
	total, most := 0, 0
	hist := map[int]int{}
	for _, n := range a.calls {
		total += n
		most = max(most, n)
		hist[n]++
	}
	a.mu.Unlock()
	out := fmt.Sprintf("reconciles %d (per parent: max %d, histogram %v)", total, most, hist)
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		return out
	}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "controller_runtime_reconcile_total", "workqueue_retries_total", "controller_runtime_reconcile_errors_total":
		default:
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["controller"] != a.controller && labels["name"] != a.controller {
				continue
			}
			v := m.GetCounter().GetValue()
			if v == 0 {
				continue
			}
			out += fmt.Sprintf("; %s%s=%v", strings.TrimPrefix(mf.GetName(), "controller_runtime_"), labelSuffix(labels["result"]), v)
		}
	}
	return out
}

func labelSuffix(v string) string {
	if v == "" {
		return ""
	}
	return "{" + v + "}"
}

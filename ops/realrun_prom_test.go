package ops_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/util/teststorage"

	"github.com/kopgo/kopgo/ops"
)

// monitor is the real run's Prometheus, in-process: it scrapes every
// target's /metrics each scrapeInterval into a TSDB (in a temporary
// directory), writing stale markers for series that vanish and for every
// series of a target that stops answering, as Prometheus does, and
// evaluates the alert rules with Prometheus's engine after each scrape.
type monitor struct {
	t       *testing.T
	db      *teststorage.TestStorage
	engine  *promql.Engine
	rules   []*rules.AlertingRule
	start   time.Time
	client  *http.Client
	mu      sync.Mutex
	targets map[string]*target // by instance
	alerts  map[alertKey]*alertLog
}

// target is one operator process's metrics endpoint.
type target struct {
	instance, url string
	last          map[string]labels.Labels // the series of the last scrape, by their labels' string
}

// alertKey names an alert as the test asserts on it: the alert and the
// controller it names (for KopgoNoLeader, the lease).
type alertKey struct{ alert, controller string }

// alertLog is what happened to one alert during the run, in seconds
// since the run began.
type alertLog struct {
	firstPending, firstFiring, resolved float64 // -1: never
	firing                              bool
	labels                              labels.Labels
}

const scrapeInterval = time.Second

func newMonitor(t *testing.T, alerts []ops.Alert) *monitor {
	t.Helper()
	m := &monitor{
		t:  t,
		db: teststorage.New(t),
		engine: promql.NewEngine(promql.EngineOpts{
			MaxSamples: 50_000_000, Timeout: 10 * time.Second, LookbackDelta: 5 * time.Minute,
			Parser: parser.NewParser(parser.Options{}),
		}),
		client:  &http.Client{Timeout: scrapeInterval},
		targets: map[string]*target{},
		alerts:  map[alertKey]*alertLog{},
	}
	t.Cleanup(func() { _ = m.engine.Close() })
	for _, a := range alerts {
		expr, err := parser.NewParser(parser.Options{}).ParseExpr(a.Expr)
		if err != nil {
			t.Fatalf("parse %s: %v", a.Name, err)
		}
		m.rules = append(m.rules, rules.NewAlertingRule(a.Name, expr, a.For, 0, labels.FromStrings("severity", a.Severity),
			labels.EmptyLabels(), labels.EmptyLabels(), "", true, nil))
	}
	return m
}

// add starts scraping a target.
func (m *monitor) add(instance string, port int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.targets[instance] = &target{instance: instance, url: fmt.Sprintf("http://127.0.0.1:%d/metrics", port)}
}

// run scrapes and evaluates until ctx ends; it returns when it stopped.
func (m *monitor) run(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	m.start = time.Now()
	go func() {
		defer close(done)
		tick := time.NewTicker(scrapeInterval)
		defer tick.Stop()
		for {
			now := time.Now()
			m.scrapeAll(ctx, now)
			m.evaluate(ctx, now)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return done
}

func (m *monitor) scrapeAll(ctx context.Context, now time.Time) {
	m.mu.Lock()
	targets := make([]*target, 0, len(m.targets))
	for _, tg := range m.targets {
		targets = append(targets, tg)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, tg := range targets {
		wg.Go(func() { m.scrape(ctx, tg, now) })
	}
	wg.Wait()
}

// scrape appends one scrape of tg at now, with its job and instance
// labels, up, and stale markers for the series it no longer has.
func (m *monitor) scrape(ctx context.Context, tg *target, now time.Time) {
	series, err := fetch(ctx, m.client, tg.url)
	ts := now.UnixMilli()
	app := m.db.Appender(ctx)
	up := 1.0
	if err != nil {
		up = 0
		series = nil
	}
	next := map[string]labels.Labels{}
	for _, s := range series {
		b := labels.NewBuilder(s.labels)
		b.Set("job", "operator")
		b.Set("instance", tg.instance)
		ls := b.Labels()
		next[ls.String()] = ls
		if _, err := app.Append(0, ls, ts, s.value); err != nil {
			m.t.Errorf("append %s: %v", ls, err)
		}
	}
	for k, ls := range tg.last {
		if _, ok := next[k]; !ok {
			if _, err := app.Append(0, ls, ts, math.Float64frombits(value.StaleNaN)); err != nil {
				m.t.Errorf("append stale marker %s: %v", ls, err)
			}
		}
	}
	if _, err := app.Append(0, labels.FromStrings("__name__", "up", "job", "operator", "instance", tg.instance), ts, up); err != nil {
		m.t.Errorf("append up: %v", err)
	}
	if err := app.Commit(); err != nil {
		m.t.Errorf("commit scrape of %s: %v", tg.instance, err)
	}
	tg.last = next
}

type sample struct {
	labels labels.Labels
	value  float64
}

// fetch reads a /metrics page into samples, as Prometheus stores them: a
// histogram as its _bucket (le), _sum and _count series.
func fetch(ctx context.Context, hc *http.Client, url string) ([]sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", url, err)
	}
	var out []sample
	for name, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			base := []string{}
			for _, lp := range mt.GetLabel() {
				base = append(base, lp.GetName(), lp.GetValue())
			}
			add := func(n string, v float64, extra ...string) {
				out = append(out, sample{labels.FromStrings(append(append([]string{"__name__", n}, base...), extra...)...), v})
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				add(name, mt.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(name, mt.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				add(name, mt.GetUntyped().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := mt.GetHistogram()
				for _, bk := range h.GetBucket() {
					add(name+"_bucket", float64(bk.GetCumulativeCount()), "le", formatLe(bk.GetUpperBound()))
				}
				add(name+"_bucket", float64(h.GetSampleCount()), "le", "+Inf")
				add(name+"_sum", h.GetSampleSum())
				add(name+"_count", float64(h.GetSampleCount()))
			case dto.MetricType_SUMMARY:
				s := mt.GetSummary()
				for _, q := range s.GetQuantile() {
					add(name, q.GetValue(), "quantile", strconv.FormatFloat(q.GetQuantile(), 'g', -1, 64))
				}
				add(name+"_sum", s.GetSampleSum())
				add(name+"_count", float64(s.GetSampleCount()))
			}
		}
	}
	return out, nil
}

func formatLe(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// evaluate runs every rule at now, as the rule manager does, and logs
// when each alert went pending, fired and resolved.
func (m *monitor) evaluate(ctx context.Context, now time.Time) {
	query := rules.EngineQueryFunc(m.engine, m.db)
	at := now.Sub(m.start).Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[alertKey]bool{}
	for _, r := range m.rules {
		if _, err := r.Eval(ctx, 0, now, query, nil, 0); err != nil {
			if ctx.Err() == nil {
				m.t.Errorf("evaluate %s: %v", r.Name(), err)
			}
			continue
		}
		for _, a := range r.ActiveAlerts() {
			controller := a.Labels.Get("controller")
			if controller == "" {
				controller = a.Labels.Get("name")
			}
			k := alertKey{r.Name(), controller}
			l := m.alerts[k]
			if l == nil {
				l = &alertLog{firstPending: at, firstFiring: -1, resolved: -1, labels: a.Labels}
				m.alerts[k] = l
			}
			if a.State == rules.StateFiring {
				seen[k] = true
				if l.firstFiring < 0 {
					l.firstFiring, l.labels = at, a.Labels
				}
				l.firing, l.resolved = true, -1
			}
		}
	}
	for k, l := range m.alerts {
		if l.firing && !seen[k] {
			l.firing, l.resolved = false, at
		}
	}
}

// log returns a copy of what happened to each alert.
func (m *monitor) log() map[alertKey]alertLog {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[alertKey]alertLog{}
	for k, l := range m.alerts {
		out[k] = *l
	}
	return out
}

// fired returns the alerts that fired at some point, by controller.
func (m *monitor) fired() map[string][]string {
	out := map[string][]string{}
	for k, l := range m.log() {
		if l.firstFiring >= 0 {
			out[k.controller] = append(out[k.controller], k.alert)
		}
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// query evaluates expr at ts over the scraped series.
func (m *monitor) query(ctx context.Context, expr string, ts time.Time) (promql.Vector, error) {
	q, err := m.engine.NewInstantQuery(ctx, m.db, nil, expr, ts)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	res := q.Exec(ctx)
	if res.Err != nil {
		return nil, res.Err
	}
	return res.Vector()
}

// report renders the alert log, ordered by first firing.
func (m *monitor) report() string {
	log := m.log()
	keys := make([]alertKey, 0, len(log))
	for k := range log {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b alertKey) int {
		if c := strings.Compare(a.controller, b.controller); c != 0 {
			return c
		}
		return strings.Compare(a.alert, b.alert)
	})
	var b strings.Builder
	for _, k := range keys {
		l := log[k]
		fmt.Fprintf(&b, "  %-30s %-19s pending %5.1fs", k.alert, k.controller, l.firstPending)
		if l.firstFiring >= 0 {
			fmt.Fprintf(&b, "  firing %5.1fs", l.firstFiring)
		} else {
			b.WriteString("  never fired  ")
		}
		if l.resolved >= 0 {
			fmt.Fprintf(&b, "  resolved %5.1fs", l.resolved)
		}
		for _, name := range []string{"error_kind", "operation", "outcome"} {
			if v := l.labels.Get(name); v != "" {
				fmt.Fprintf(&b, "  %s=%s", name, v)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

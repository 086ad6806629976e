package controller_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	kopcontroller "github.com/kopgo/kopgo/controller"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/owners"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// Acting once, on what was written: the loop's guarantees for a reconciler
// whose side effects are outside the cluster, where doing the same work
// twice costs money or data. Each test counts the reconciler's side
// effects, not only requests, against the real API server.

// minter mints an external ID for a Widget whose status has none, as an
// operator that creates a thing in an external API and records its ID in
// status does, and deletes it in Cleanup.
type minter struct {
	mu       sync.Mutex
	minted   map[types.UID][]string // IDs minted, per object
	cleanups map[types.UID]int
	next     int
	calls    map[types.UID][]time.Time // Reconcile calls
}

func newMinter() *minter {
	return &minter{minted: map[types.UID][]string{}, cleanups: map[types.UID]int{}, calls: map[types.UID][]time.Time{}}
}

func (m *minter) Reconcile(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls[w.UID] = append(m.calls[w.UID], time.Now())
	if w.Status.Phase == "" {
		m.next++
		id := fmt.Sprintf("ext-%d", m.next)
		m.minted[w.UID] = append(m.minted[w.UID], id)
		w.Status.Phase = id
	}
	return reconciler.Done(), nil
}

func (m *minter) Cleanup(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cleanups[w.UID]++
	return reconciler.Done(), nil
}

// 50 objects created at once, each minting an external ID when its status
// has none: exactly 50 IDs, and every status names its first. Before the
// loop read its own writes, the reconcile woken by its own finalizer
// patch often read a cache without the first status, and minted again
// (16 IDs for 10 objects).
func TestOneExternalIDPerObject(t *testing.T) {
	ns := cluster.Namespace(t)
	m := newMinter()
	run(t, kopcontroller.New[*widget.Widget]("act-once-mint", m).Concurrency(8).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { createWidget(t, ns, fmt.Sprintf("w%d", i), ns) })
	}
	wg.Wait()
	eventually(t, 30*time.Second, "every widget has its ID", func() error {
		var list widget.WidgetList
		if err := cluster.Client().List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, w := range list.Items {
			if w.Status.Phase == "" {
				return fmt.Errorf("%s has no ID yet", w.Name)
			}
		}
		return nil
	})
	time.Sleep(time.Second) // any reconcile still to come
	var list widget.WidgetList
	if err := cluster.Client().List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	total := 0
	for _, ids := range m.minted {
		total += len(ids)
	}
	if total != n {
		t.Errorf("%d IDs minted for %d objects, want %d", total, n, n)
	}
	for _, w := range list.Items {
		if ids := m.minted[w.UID]; len(ids) == 0 || w.Status.Phase != ids[0] {
			t.Errorf("%s: status names %q, minted %v: want its first ID", w.Name, w.Status.Phase, ids)
		}
	}
}

// A new object whose Reconcile succeeds is reconciled once: the loop's
// own finalizer patch and status write, which that reconcile accounted
// for, start no second one (there were two per object).
func TestNewObjectIsReconciledOnce(t *testing.T) {
	ns := cluster.Namespace(t)
	m := newMinter()
	reg := prometheus.NewRegistry()
	metrics, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	run(t, kopcontroller.New[*widget.Widget]("act-once-single", m).Concurrency(4).Metrics(metrics).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	const n = 20
	for i := range n {
		createWidget(t, ns, fmt.Sprintf("w%d", i), ns)
	}
	eventually(t, 30*time.Second, "every widget reconciled", func() error {
		m.mu.Lock()
		defer m.mu.Unlock()
		if len(m.calls) < n {
			return fmt.Errorf("%d of %d reconciled", len(m.calls), n)
		}
		return nil
	})
	time.Sleep(5 * time.Second)
	m.mu.Lock()
	defer m.mu.Unlock()
	for uid, calls := range m.calls {
		if len(calls) != 1 {
			t.Errorf("object %s reconciled %d times within 5 s without a change, want once", uid, len(calls))
		}
	}
	t.Logf("deferrals: %v deferred, %v expired",
		testutil.ToFloat64(series(reg, "kopgo_reconcile_deferred_total", "outcome", "deferred")),
		testutil.ToFloat64(series(reg, "kopgo_reconcile_deferred_total", "outcome", "expired")))
}

// 50 deletions of objects whose Cleanup succeeds at once: exactly 50
// Cleanups. The delete event of an object whose cleanup removed the
// finalizer carries its last stored state, which still lists that
// finalizer; it was taken for a deletion past the finalizer
// (kubernetes#77988) and ran Cleanup again (9 Cleanups for 5 deletions).
func TestOneCleanupPerDeletion(t *testing.T) {
	ns := cluster.Namespace(t)
	m := newMinter()
	run(t, kopcontroller.New[*widget.Widget]("act-once-cleanup", m).Concurrency(8).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	const n = 50
	ws := make([]*widget.Widget, n)
	for i := range n {
		ws[i] = createWidget(t, ns, fmt.Sprintf("w%d", i), ns)
	}
	eventually(t, 30*time.Second, "every widget holds the finalizer", func() error {
		for _, w := range ws {
			if len(getWidget(t, w).Finalizers) == 0 {
				return fmt.Errorf("%s has no finalizer", w.Name)
			}
		}
		return nil
	})
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() {
			if err := cluster.Client().Delete(context.Background(), w); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	eventually(t, 30*time.Second, "every widget gone", widgetsGone(t, ns))
	time.Sleep(time.Second) // delete events and any reconcile still to come
	m.mu.Lock()
	defer m.mu.Unlock()
	total := 0
	for uid, c := range m.cleanups {
		total += c
		if c != 1 {
			t.Errorf("object %s: %d Cleanups, want 1", uid, c)
		}
	}
	if total != n {
		t.Errorf("%d Cleanups for %d deletions, want %d", total, n, n)
	}
}

// failOnce fails each object's first reconcile, asking for a retry after
// its delay (a provider answering 429 with Retry-After), and records the
// reconciles' start times.
type failOnce struct {
	delay time.Duration
	mu    sync.Mutex
	calls map[types.UID][]time.Time
}

func (f *failOnce) Reconcile(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[w.UID] = append(f.calls[w.UID], time.Now())
	if len(f.calls[w.UID]) == 1 {
		return reconciler.RequeueAfter(f.delay), koperrors.Errorf(koperrors.Unavailable, "provider: 429 Too Many Requests, retry after %s", f.delay)
	}
	return reconciler.Done(), nil
}

func (f *failOnce) Cleanup(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
	return reconciler.Done(), nil
}

// A delay returned with the first failure is honoured: the second
// reconcile starts no sooner. The loop's own finalizer patch used to start
// it 8-24 ms later.
func TestDelayWithFirstFailureIsHonoured(t *testing.T) {
	ns := cluster.Namespace(t)
	f := &failOnce{delay: 2 * time.Second, calls: map[types.UID][]time.Time{}}
	run(t, kopcontroller.New[*widget.Widget]("act-once-delay", f).Concurrency(4).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	const n = 10
	for i := range n {
		createWidget(t, ns, fmt.Sprintf("w%d", i), ns)
	}
	eventually(t, 30*time.Second, "a second reconcile of every widget", func() error {
		f.mu.Lock()
		defer f.mu.Unlock()
		done := 0
		for _, calls := range f.calls {
			if len(calls) >= 2 {
				done++
			}
		}
		if done < n {
			return fmt.Errorf("%d of %d retried", done, n)
		}
		return nil
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	for uid, calls := range f.calls {
		if gap := calls[1].Sub(calls[0]); gap < f.delay {
			t.Errorf("object %s: second reconcile %s after the first failure, want at least %s", uid, gap, f.delay)
		}
	}
}

// refused fails every reconcile with the error an HTTP client returns
// when an external host refuses connections.
type refused struct {
	addr  string
	mu    sync.Mutex
	calls []time.Time
}

func (r *refused) Reconcile(ctx context.Context, _ *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	r.mu.Lock()
	r.calls = append(r.calls, time.Now())
	r.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.addr+"/records", nil)
	if err != nil {
		return reconciler.Done(), err
	}
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		_ = resp.Body.Close()
		return reconciler.Done(), fmt.Errorf("the closed port answered %s", resp.Status)
	}
	return reconciler.Done(), fmt.Errorf("call provider: %w", err)
}

// An external system that refuses connections is backed off
// exponentially, past the 3 s cap meant for the API server's own outages
// (which TestRecoveryAfterOutageIsPrompt keeps prompt): it was asked every
// 3 s per object, forever.
func TestExternalOutageBacksOffPastTheAPIServerCap(t *testing.T) {
	ns := cluster.Namespace(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // a port nobody listens on: connection refused
	r := &refused{addr: addr}
	run(t, kopcontroller.New[*widget.Widget]("act-once-refused", r).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	createWidget(t, ns, "w", ns)
	eventually(t, 40*time.Second, "a retry gap past 3 s", func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if gaps := gapsOf(r.calls); len(gaps) == 0 || slices.Max(gaps) <= 4*time.Second {
			return fmt.Errorf("gaps %v", gaps)
		}
		return nil
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	gaps := gapsOf(r.calls)
	// The first gap also holds the first failure's status write (Ready
	// turns False; later failures change nothing), which a loaded API
	// server can make longer than the second backoff: growth is judged
	// from the second gap on, and only from gaps long enough (200 ms) for
	// a loaded machine's scheduling not to decide their order (the first
	// backoffs are 5, 10, 20 ms).
	for i := 2; i < len(gaps); i++ {
		if gaps[i-1] >= 200*time.Millisecond && gaps[i] < gaps[i-1]/2 {
			t.Errorf("gaps %v: gap %d shrank; want them growing toward the maximum", gaps, i)
		}
	}
	if gaps[len(gaps)-1] <= 3*time.Second {
		t.Errorf("gaps %v: want past 3 s", gaps)
	}
}

func gapsOf(ts []time.Time) []time.Duration {
	var gaps []time.Duration
	for i := 1; i < len(ts); i++ {
		gaps = append(gaps, ts[i].Sub(ts[i-1]).Round(time.Millisecond))
	}
	return gaps
}

// series is the sum of a counter family's series with one label value,
// for testutil.ToFloat64.
func series(reg *prometheus.Registry, name, label, value string) prometheus.Collector {
	return counterSeries{reg: reg, name: name, label: label, value: value}
}

type counterSeries struct {
	reg                *prometheus.Registry
	name, label, value string
}

var counterDesc = prometheus.NewDesc("kopgo_test_series", "test", nil, nil)

func (c counterSeries) Describe(ch chan<- *prometheus.Desc) { ch <- counterDesc }

func (c counterSeries) Collect(ch chan<- prometheus.Metric) {
	v := 0.0
	families, _ := c.reg.Gather()
	for _, f := range families {
		if f.GetName() != c.name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == c.label && l.GetValue() == c.value {
					v += m.GetCounter().GetValue()
				}
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(counterDesc, prometheus.GaugeValue, v)
}

// applyingChild applies a ConfigMap it controls with the Applier, and
// counts its reconciles per object.
type applyingChild struct {
	mu    sync.Mutex
	calls map[types.UID]int
}

func (a *applyingChild) Reconcile(ctx context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
	a.mu.Lock()
	a.calls[w.UID]++
	a.mu.Unlock()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + "-child"}, Data: map[string]string{"size": fmt.Sprint(w.Spec.Size)}}
	if err := owners.SetController(w, cm, env.Scheme); err != nil {
		return reconciler.Done(), err
	}
	_, err := env.Applier.Apply(ctx, cm, apply.Force(true))
	return reconciler.Done(), err
}

func (a *applyingChild) count(uid types.UID) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls[uid]
}

// A child's watch events caused by the Applier's own apply (its create,
// an update for a new spec) do not reconcile the parent again: the
// reconcile that applied it accounted for them. A change someone else
// makes to the child still does (drift is reverted).
func TestOwnChildWritesDoNotReconcileAgain(t *testing.T) {
	ns := cluster.Namespace(t)
	a := &applyingChild{calls: map[types.UID]int{}}
	run(t, kopcontroller.New[*widget.Widget]("act-once-child", a).Owns(&corev1.ConfigMap{}).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	w := createWidget(t, ns, "w", ns)
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w-child"}}
	eventually(t, 30*time.Second, "the child", func() error {
		return cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(child), child)
	})
	time.Sleep(3 * time.Second)
	if n := a.count(w.UID); n != 1 {
		t.Errorf("new parent with one child: %d reconciles within 3 s, want 1", n)
	}
	// A new spec: one reconcile, which updates the child.
	cur := getWidget(t, w)
	cur.Spec.Size = 2
	if err := cluster.Client().Update(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the child updated", func() error {
		if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(child), child); err != nil {
			return err
		}
		if child.Data["size"] != "2" {
			return fmt.Errorf("child data %v", child.Data)
		}
		return nil
	})
	time.Sleep(3 * time.Second)
	if n := a.count(w.UID); n != 2 {
		t.Errorf("after a spec change: %d reconciles, want 2", n)
	}
	// Someone else edits the child: the parent is reconciled, and the
	// edit reverted.
	child.Data["size"] = "99"
	if err := cluster.Client().Update(t.Context(), child); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the edit reverted", func() error {
		if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(child), child); err != nil {
			return err
		}
		if child.Data["size"] != "2" {
			return fmt.Errorf("child data %v after %d reconciles", child.Data, a.count(w.UID))
		}
		return nil
	})
}

// healthCheck fails the Widgets whose name starts with "bad" terminally
// and succeeds for the others.
type healthCheck struct{}

func (healthCheck) Reconcile(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	if strings.HasPrefix(w.Name, "bad") {
		return reconciler.Done(), koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "spec.size: %d is not allowed", w.Spec.Size))
	}
	return reconciler.Done(), nil
}

// The object-health gauges count what the loop wrote into the objects'
// conditions: after a run, and after deletions.
func TestObjectGaugesEqualTheConditions(t *testing.T) {
	ns := cluster.Namespace(t)
	reg := prometheus.NewRegistry()
	metrics, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	const name = "act-once-health"
	run(t, kopcontroller.New[*widget.Widget](name, healthCheck{}).Metrics(metrics).
		Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	var good []*widget.Widget
	for i := range 6 {
		good = append(good, createWidget(t, ns, fmt.Sprintf("good%d", i), ns))
	}
	for i := range 4 {
		createWidget(t, ns, fmt.Sprintf("bad%d", i), ns)
	}
	gauge := func(condition, st string) float64 {
		families, _ := reg.Gather()
		for _, f := range families {
			if f.GetName() != "kopgo_objects" {
				continue
			}
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["controller"] == name && labels["condition"] == condition && labels["status"] == st {
					return m.GetGauge().GetValue()
				}
			}
		}
		return -1
	}
	counted := func() error {
		var list widget.WidgetList
		if err := cluster.Client().List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		want := map[string]float64{}
		for _, w := range list.Items {
			for _, c := range w.Status.Conditions {
				want[c.Type+"/"+string(c.Status)]++
			}
		}
		for _, k := range []string{"Ready/True", "Ready/False", "Stalled/True"} {
			typ, st, _ := strings.Cut(k, "/")
			if got := gauge(typ, st); got != want[k] {
				return fmt.Errorf("kopgo_objects{condition=%q,status=%q} = %v, the objects' conditions count %v", typ, st, got, want[k])
			}
		}
		if want["Ready/True"]+want["Stalled/True"] != float64(len(list.Items)) {
			return fmt.Errorf("not every object reconciled yet: %v", want)
		}
		return nil
	}
	eventually(t, 30*time.Second, "gauges equal to the conditions", counted)
	if got := gauge(status.Ready, "True"); got != 6 {
		t.Errorf("Ready=True gauge %v, want 6", got)
	}
	for _, w := range good[:3] {
		if err := cluster.Client().Delete(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "gauges equal to the conditions after deletions", func() error {
		if got := gauge(status.Ready, "True"); got != 3 {
			return fmt.Errorf("Ready=True gauge %v, want 3", got)
		}
		return counted()
	})
}

// widgetsGone reports whether ns holds no Widget any more, for eventually.
func widgetsGone(t *testing.T, ns string) func() error {
	t.Helper()
	return func() error {
		var list widget.WidgetList
		if err := cluster.Client().List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) > 0 {
			return fmt.Errorf("%d left", len(list.Items))
		}
		return nil
	}
}

package controller_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	kopcontroller "github.com/kopgo/kopgo/controller"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/owners"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

// What wakes an object: every change by someone else reaches the
// reconciler, and no wake-up that brings nothing new cuts a delay short.
// Against the real API server, through a fault proxy where the watch must
// break.

// gated records the spec each Reconcile saw and, while its gate is
// closed, holds the next Reconcile until it opens.
type gated struct {
	mu      sync.Mutex
	sizes   []int64
	gate    chan struct{} // nil: open
	entered chan struct{}
}

func (g *gated) Reconcile(_ context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	g.mu.Lock()
	g.sizes = append(g.sizes, w.Spec.Size)
	gate, entered := g.gate, g.entered
	g.gate, g.entered = nil, nil
	g.mu.Unlock()
	if gate != nil {
		close(entered)
		<-gate
	}
	w.Status.Phase = fmt.Sprintf("size %d", w.Spec.Size)
	return reconciler.Done(), nil
}

// hold closes the gate: the next Reconcile waits for the returned open.
func (g *gated) hold() (entered <-chan struct{}, open func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	gate, e := make(chan struct{}), make(chan struct{})
	g.gate, g.entered = gate, e
	return e, func() { close(gate) }
}

func (g *gated) seen() []int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int64(nil), g.sizes...)
}

// isWidgetRead matches the operator's reads of Widgets: its informer's
// list and watch.
func isWidgetRead(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/widgets")
}

// A spec change made while a reconcile on the cached copy writes status,
// with the operator's watch broken: the informer relists, and one update
// goes from the version our write was based on to the one it returned,
// the spec change merged into it. It must reconcile. Before, the loop
// took the update for the echo of its status write and dropped it: the
// spec change was never reconciled (observedGeneration stayed 1).
func TestRelistDoesNotHideAChange(t *testing.T) {
	ns := cluster.Namespace(t)
	proxy, err := testkit.StartFaultProxy(cluster.Config, testkit.Faults{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	g := &gated{}
	entered, open := g.hold()
	run(t, kopcontroller.New[*widget.Widget]("wake-relist", g).Config(proxy.Config()).Scheme(scheme).
		Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	w := createWidget(t, ns, "w", ns)
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the first reconcile did not start")
	}
	// The reconcile holds the object at generation 1. The operator's
	// informer loses its watch and cannot list: it sees nothing of what
	// follows until the faults end.
	proxy.SetFaults(testkit.Faults{Match: isWidgetRead, ResetBeforeServer: 1})
	proxy.Pause()
	proxy.Resume()
	cur := getWidget(t, w)
	cur.Spec.Size = 2
	if err := cluster.Client().Update(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	open() // the status write, made on generation 1, returns a version past the change
	eventually(t, 30*time.Second, "the status write of the held reconcile", func() error {
		if got := getWidget(t, w); got.Status.Phase != "size 1" {
			return fmt.Errorf("phase %q", got.Status.Phase)
		}
		return nil
	})
	// The watch resumes from a version the server no longer holds (as
	// after an API server restart): the informer relists, and delivers one
	// update for two changes.
	proxy.SetFaults(testkit.Faults{Match: isWidgetRead, ExpireWatch: 1})
	eventually(t, 30*time.Second, "a watch expired", func() error {
		if proxy.Stats().ExpireWatch == 0 {
			return fmt.Errorf("none yet: %v", proxy.Stats())
		}
		return nil
	})
	proxy.SetFaults(testkit.Faults{})
	eventually(t, 30*time.Second, "the spec change reconciled", func() error {
		if got := getWidget(t, w); got.Status.ObservedGeneration != 2 || got.Status.Phase != "size 2" {
			return fmt.Errorf("observedGeneration %d, phase %q; reconciles saw sizes %v", got.Status.ObservedGeneration, got.Status.Phase, g.seen())
		}
		return nil
	})
	t.Logf("reconciles saw sizes %v; proxy: %v", g.seen(), proxy.Stats())
}

// echoing writes an annotation of its own on its object through the Env's
// client (as the external package records an ID) and fails with an error
// that carries a delay, or succeeds once failing is off.
type echoing struct {
	mu    sync.Mutex
	calls map[types.UID][]time.Time
	fail  error
}

func (e *echoing) Reconcile(ctx context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
	e.mu.Lock()
	e.calls[w.UID] = append(e.calls[w.UID], time.Now())
	n, fail := len(e.calls[w.UID]), e.fail
	e.mu.Unlock()
	cp := w.DeepCopy()
	if cp.Annotations == nil {
		cp.Annotations = map[string]string{}
	}
	cp.Annotations["example.com/attempt"] = fmt.Sprint(n)
	if err := env.Client.Patch(ctx, cp, client.MergeFrom(w)); err != nil {
		return reconciler.Done(), err
	}
	return reconciler.Done(), fail
}

func (e *echoing) times(uid types.UID) []time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]time.Time(nil), e.calls[uid]...)
}

// A failure whose error asks for a delay (a provider's 429 with
// Retry-After 2 s), by a reconciler that writes its own annotation on each
// attempt: the annotation's echo, and a label someone else sets meanwhile,
// do not call it again before the delay ends. Before, the echo of the
// annotation patch started the next attempt within milliseconds (a
// refused create was called again every 40 ms).
func TestOwnWritesDoNotCutADelayShort(t *testing.T) {
	ns := cluster.Namespace(t)
	reg := prometheus.NewRegistry()
	metrics, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	e := &echoing{calls: map[types.UID][]time.Time{}, fail: httpError(429, "2")}
	run(t, kopcontroller.New[*widget.Widget]("wake-delay", e).Config(cluster.Config).Scheme(scheme).Metrics(metrics).
		Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	w := createWidget(t, ns, "w", ns)
	eventually(t, 30*time.Second, "the first attempt", func() error {
		if len(e.times(w.UID)) == 0 {
			return fmt.Errorf("no attempt")
		}
		return nil
	})
	time.Sleep(500 * time.Millisecond)
	cur := getWidget(t, w)
	cur.Labels["someone"] = "else"
	if err := cluster.Client().Update(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	calls := e.times(w.UID)
	gaps := gapsOf(calls)
	for i, d := range gaps {
		if d < 2*time.Second {
			t.Errorf("attempt %d came %s after the one before, within its Retry-After of 2 s (gaps %v)", i+2, d.Round(time.Millisecond), gaps)
		}
	}
	if len(calls) < 2 || len(calls) > 4 {
		t.Errorf("%d attempts in 5.5 s with Retry-After 2 s, want 2 to 4 (gaps %v)", len(calls), gaps)
	}
	t.Logf("gaps %v; skipped wake-ups: retry_after %v, nothing_new %v", gaps,
		testutil.ToFloat64(series(reg, "kopgo_reconcile_skipped_total", "reason", "retry_after")),
		testutil.ToFloat64(series(reg, "kopgo_reconcile_skipped_total", "reason", "nothing_new")))
}

// A terminal failure (a provider's 401) by a reconciler that writes its
// own annotation: one attempt per spec generation; the annotation's echo
// calls nothing. A new spec is tried at once. Before: 118 calls in 5 s.
func TestRefusedObjectIsCalledOncePerGeneration(t *testing.T) {
	ns := cluster.Namespace(t)
	e := &echoing{calls: map[types.UID][]time.Time{}, fail: httpError(401, "")}
	run(t, kopcontroller.New[*widget.Widget]("wake-refused", e).Config(cluster.Config).Scheme(scheme).
		Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	w := createWidget(t, ns, "w", ns)
	eventually(t, 30*time.Second, "Stalled", readyIs(t, w, "False", "Unauthorized"))
	time.Sleep(5 * time.Second)
	if n := len(e.times(w.UID)); n != 1 {
		t.Errorf("%d attempts in 5 s for one generation refused terminally, want 1", n)
	}
	cur := getWidget(t, w)
	cur.Spec.Size = 2
	if err := cluster.Client().Update(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the new generation attempted", func() error {
		if n := len(e.times(w.UID)); n != 2 {
			return fmt.Errorf("%d attempts", n)
		}
		return nil
	})
	time.Sleep(3 * time.Second)
	if n := len(e.times(w.UID)); n != 2 {
		t.Errorf("%d attempts for two generations, want 2", n)
	}
}

// A failure with a backoff the ErrorPolicy set (2 s) holds against the
// echoes of the reconciler's own writes, but not against a spec change by
// someone else, which is tried at once.
func TestBackoffHoldsAgainstEchoesNotAgainstChanges(t *testing.T) {
	ns := cluster.Namespace(t)
	e := &echoing{calls: map[types.UID][]time.Time{}, fail: koperrors.Errorf(koperrors.Unavailable, "the system is away")}
	r := policy{Reconciler: e, after: 2 * time.Second}
	run(t, kopcontroller.New[*widget.Widget]("wake-backoff", reconciler.Reconciler[*widget.Widget](r)).Config(cluster.Config).Scheme(scheme).
		Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	w := createWidget(t, ns, "w", ns)
	eventually(t, 30*time.Second, "the first attempt", func() error {
		if len(e.times(w.UID)) == 0 {
			return fmt.Errorf("no attempt")
		}
		return nil
	})
	time.Sleep(300 * time.Millisecond)
	if n := len(e.times(w.UID)); n != 1 {
		t.Fatalf("%d attempts 300 ms after the first failure with a 2 s backoff, want 1", n)
	}
	cur := getWidget(t, w)
	cur.Spec.Size = 2
	changed := time.Now()
	if err := cluster.Client().Update(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	eventually(t, 1500*time.Millisecond, "the spec change tried at once", func() error {
		if n := len(e.times(w.UID)); n != 2 {
			return fmt.Errorf("%d attempts %s after the change", n, time.Since(changed).Round(time.Millisecond))
		}
		return nil
	})
	time.Sleep(1500 * time.Millisecond)
	if n := len(e.times(w.UID)); n != 2 {
		t.Errorf("%d attempts 1.5 s after the second failure with a 2 s backoff, want 2 (gaps %v)", n, gapsOf(e.times(w.UID)))
	}
}

// httpError is a provider's answer with code and Retry-After (""
// none), read by koperrors.FromHTTP.
func httpError(code int, retryAfter string) error {
	resp := &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)), Header: http.Header{},
		Body: http.NoBody, Request: &http.Request{Method: http.MethodPost, URL: &url.URL{Scheme: "https", Host: "dns.example.com", Path: "/v1/records"}}}
	if retryAfter != "" {
		resp.Header.Set("Retry-After", retryAfter)
	}
	return koperrors.FromHTTP(resp)
}

// policy gives a Reconciler a fixed retry delay.
type policy struct {
	reconciler.Reconciler[*widget.Widget]
	after time.Duration
}

func (p policy) RetryAfter(*widget.Widget, error, int) time.Duration { return p.after }

// mirror reflects what it is given into status, through every kind of
// write the loop must not mistake for news: its own annotation (through
// the Env's client), a child it applies (whose foreign key it reads back
// from the apply's answer), the status, and the finalizer (it has a
// Cleanup).
type mirror struct{ calls atomic.Int64 }

func (m *mirror) Reconcile(ctx context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
	m.calls.Add(1)
	want := fmt.Sprintf("size %d tag %s", w.Spec.Size, w.Labels["tag"])
	if w.Annotations["example.com/seen"] != want {
		cp := w.DeepCopy()
		if cp.Annotations == nil {
			cp.Annotations = map[string]string{}
		}
		cp.Annotations["example.com/seen"] = want
		if err := env.Client.Patch(ctx, cp, client.MergeFrom(w)); err != nil {
			return reconciler.Done(), err
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + "-child"}, Data: map[string]string{"seen": want}}
	if err := owners.SetController(w, cm, env.Scheme); err != nil {
		return reconciler.Done(), err
	}
	res, err := env.Applier.Apply(ctx, cm, apply.Force(true))
	if err != nil {
		return reconciler.Done(), err
	}
	var got corev1.ConfigMap
	if err := res.Into(&got); err != nil {
		return reconciler.Done(), err
	}
	w.Status.Phase = want + " foreign " + got.Data["foreign"]
	return reconciler.Done(), nil
}

func (m *mirror) Cleanup(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
	return reconciler.Done(), nil
}

// Changes by someone else (a spec, a label, a key of the child) land at
// random moments around the controller's own writes (its finalizer,
// status, annotation and child applies): every one is reconciled. In every
// tenth interleaving (up to KOPGO_RELISTS of them, default 3) the
// operator's informers are blind while the last two changes land, and
// then relist (their watch resumes with 410 Gone): those changes arrive
// merged with the controller's own writes into one update per object.
// KOPGO_INTERLEAVINGS sets the number of interleavings (default 100;
// three changes each). On the code before, 2 of 100 were lost, both in
// relists (a label change merged with the status write).
func TestNoChangeIsLost(t *testing.T) {
	n, maxRelists := 100, 3
	for name, v := range map[string]*int{"KOPGO_INTERLEAVINGS": &n, "KOPGO_RELISTS": &maxRelists} {
		if s := os.Getenv(name); s != "" {
			var err error
			if *v, err = strconv.Atoi(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	ns := cluster.Namespace(t)
	proxy, err := testkit.StartFaultProxy(cluster.Config, testkit.Faults{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	m := &mirror{}
	run(t, kopcontroller.New[*widget.Widget]("wake-interleave", m).Owns(&corev1.ConfigMap{}).Config(proxy.Config()).Scheme(scheme).
		Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+ns))
	w := createWidget(t, ns, "w", ns)
	child := types.NamespacedName{Namespace: ns, Name: "w-child"}
	rng := rand.New(rand.NewPCG(34, 34))
	expect := func(size int64, tag, foreign string) func() error {
		want := fmt.Sprintf("size %d tag %s foreign %s", size, tag, foreign)
		return func() error {
			if got := getWidget(t, w); got.Status.Phase != want {
				return fmt.Errorf("phase %q, want %q", got.Status.Phase, want)
			}
			return nil
		}
	}
	size, tag, foreign := int64(1), "", ""
	eventually(t, 30*time.Second, "the first reconcile", expect(size, tag, foreign))
	change := func(i, kind int) {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			switch kind {
			case 0:
				cur := getWidget(t, w)
				size = int64(i + 2)
				cur.Spec.Size = size
				return cluster.Client().Update(t.Context(), cur)
			case 1:
				cur := getWidget(t, w)
				tag = fmt.Sprint("t", i)
				cur.Labels["tag"] = tag
				return cluster.Client().Update(t.Context(), cur)
			}
			var cm corev1.ConfigMap
			if err := cluster.Client().Get(t.Context(), child, &cm); err != nil {
				return err
			}
			foreign = fmt.Sprint("f", i)
			cm.Data["foreign"] = foreign
			return cluster.Client().Update(t.Context(), &cm)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	start, lost, late, relists := time.Now(), 0, 0, 0
	for i := range n {
		relist := i%10 == 9 && relists < maxRelists
		for j, kind := range rng.Perm(3) {
			// Each change a random moment after the one before, often
			// while the reconcile of the one before writes.
			time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond)
			if relist && j == 1 {
				proxy.SetFaults(testkit.Faults{Match: isWidgetOrChildRead, ResetBeforeServer: 1})
				proxy.Pause() // the watches end: the informers see nothing more
				proxy.Resume()
			}
			change(i, kind)
		}
		if relist {
			relists++
			time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
			before := proxy.Stats().ExpireWatch
			proxy.SetFaults(testkit.Faults{Match: isWidgetOrChildRead, ExpireWatch: 1})
			eventually(t, 60*time.Second, "a watch expired", func() error {
				if proxy.Stats().ExpireWatch == before {
					return fmt.Errorf("none yet: %v", proxy.Stats())
				}
				return nil
			})
			proxy.SetFaults(testkit.Faults{})
		}
		// A broken watch costs the informer its backoff (client-go's
		// reflector: 0.8 s doubling to 30 s, with as much jitter, reset
		// after two quiet minutes), and the informer of one kind can still
		// be in it when the other's change is already reconciled: a change
		// seen after 15 s is late (counted, logged), one not seen within
		// 100 s lost (a failure).
		changed := time.Now()
		for {
			err := expect(size, tag, foreign)()
			if err == nil {
				if took := time.Since(changed); took > 15*time.Second {
					late++
					t.Logf("interleaving %d: reconciled late, after %s", i, took.Round(time.Millisecond))
				}
				break
			}
			if time.Since(changed) > 100*time.Second {
				lost++
				t.Errorf("interleaving %d: not reconciled within 100 s: %v", i, err)
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Logf("%d interleavings (%d changes, %d of them with a relist) in %s: %d lost, %d late (after 15 s); %d reconciles; proxy: %v",
		n, 3*n, relists, time.Since(start).Round(time.Millisecond), lost, late, m.calls.Load(), proxy.Stats())
}

// isWidgetOrChildRead matches the operator's reads (lists and watches) of
// Widgets and ConfigMaps.
func isWidgetOrChildRead(r *http.Request) bool {
	return r.Method == http.MethodGet && (strings.Contains(r.URL.Path, "/widgets") || strings.Contains(r.URL.Path, "/configmaps"))
}

package external_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/external"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// 30 objects at once: exactly one resource each, its ID on the object, one
// Created event each, and a new object costs one create and one observe.
func TestOneResourcePerObject(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	rec := &observability.FakeRecorder{}
	start(t, "ext-once", ns, external.New(connectTo(finder{s})), rec)
	ws := newWidgets(t, ns, 30, nil)
	ids := allReady(t, ws, 30*time.Second)
	if diff := cmp.Diff(keysOf(ws), s.live()); diff != "" {
		t.Errorf("resources by key (-want +got):\n%s", diff)
	}
	for i, w := range ws {
		if size, ok := s.sizeOf(ids[i]); !ok || size != 1 {
			t.Errorf("%s records %s: exists %v, size %d", w.Name, ids[i], ok, size)
		}
	}
	if got := s.count("create"); got != 30 {
		t.Errorf("creates: got %d, want 30", got)
	}
	if got := s.count("observe"); got != 30 {
		t.Errorf("observes: got %d, want 30 (one after each create, none while nothing is due)", got)
	}
	if got := countEvents(rec, "Created"); got != 30 {
		t.Errorf("Created events: got %d, want 30", got)
	}
	for op, want := range map[string]float64{"create": 30, "observe": 30} {
		if got := externalCalls(t, "ext-once", op, "success"); got != want {
			t.Errorf("kopgo_external_requests_total{operation=%q,outcome=\"success\"}: got %v, want %v", op, got, want)
		}
	}
}

// externalCalls reads kopgo_external_requests_total for one controller,
// operation and outcome.
func externalCalls(t *testing.T, controller, op, outcome string) float64 {
	t.Helper()
	return counter(t, "kopgo_external_requests_total", map[string]string{"controller": controller, "operation": op, "outcome": outcome})
}

// counter reads the counter name with exactly the labels want from
// controller-runtime's registry, where the Builder's metrics are; 0 when
// there is no such series.
func counter(t *testing.T, name string, want map[string]string) float64 {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if maps.Equal(labels, want) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// A spec change is one Update (an Updated event), a resource changed behind
// the operator's back is put back at the next check (DriftCorrected), and
// one deleted behind its back is created again.
func TestChangesAndDrift(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	rec := &observability.FakeRecorder{}
	const period = 2 * time.Second
	start(t, "ext-drift", ns, external.New(connectTo(finder{s}), external.WithPeriod(period)), rec)
	ws := newWidgets(t, ns, 3, nil)
	ids := allReady(t, ws, 30*time.Second)

	w := get(t, ws[0])
	w.Spec.Size = 7
	if err := cluster.Client().Update(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the resource follows the spec", func() error {
		if size, _ := s.sizeOf(ids[0]); size != 7 {
			return fmt.Errorf("size %d", size)
		}
		return nil
	})
	// The event is recorded after the call returns: the system can show
	// the new size a moment before.
	eventually(t, 10*time.Second, "one Updated event", func() error {
		if got := countEvents(rec, "Updated"); got != 1 {
			return fmt.Errorf("%d Updated events", got)
		}
		return nil
	})

	changed := time.Now()
	s.drift(ids[1], false)
	eventually(t, period*5/4+2*time.Second, "a changed resource put back", func() error {
		if size, _ := s.sizeOf(ids[1]); size != 1 {
			return fmt.Errorf("size %d", size)
		}
		return nil
	})
	t.Logf("changed resource put back after %s (period %s)", time.Since(changed).Round(time.Millisecond), period)

	gone := time.Now()
	s.drift(ids[2], true)
	eventually(t, period*5/4+2*time.Second, "a deleted resource created again and recorded", func() error {
		got := get(t, ws[2]).Annotations[external.NameAnnotation]
		if got == ids[2] || got == "" {
			return fmt.Errorf("still %q", got)
		}
		if _, ok := s.sizeOf(got); !ok {
			return fmt.Errorf("%s recorded but not at the provider", got)
		}
		return nil
	})
	t.Logf("deleted resource created again after %s", time.Since(gone).Round(time.Millisecond))
	if got := countEvents(rec, "DriftCorrected"); got != 2 {
		t.Errorf("DriftCorrected events: got %d, want 2", got)
	}
	if got := countEvents(rec, "Updated"); got != 1 {
		t.Errorf("Updated events: got %d, want 1 (the spec change's)", got)
	}
	if diff := cmp.Diff(keysOf(ws), s.live()); diff != "" {
		t.Errorf("resources by key (-want +got):\n%s", diff)
	}
}

// Between checks nothing is called: 20 Ready objects with a 2 s period are
// each observed once per period (3 periods: 3 slots, or 4 when the window
// opens just before one), and nothing else is called.
func TestIdleCallsOnlyOnSchedule(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	const period = 2 * time.Second
	start(t, "ext-idle", ns, external.New(connectTo(finder{s}), external.WithPeriod(period)), &observability.FakeRecorder{})
	ws := newWidgets(t, ns, 20, nil)
	ids := allReady(t, ws, 30*time.Second)
	time.Sleep(period) // the first checks after the creates are scheduled
	before, calls := s.observes(ids), s.count("create")+s.count("update")+s.count("find")
	const periods = 3
	time.Sleep(periods * period)
	total := 0
	for i, n := range s.observes(ids) {
		n -= before[i]
		total += n
		if n < periods-1 || n > periods+1 {
			t.Errorf("%s observed %d times in %d periods, want %d..%d", ws[i].Name, n, periods, periods-1, periods+1)
		}
	}
	if got := s.count("create") + s.count("update") + s.count("find"); got != calls {
		t.Errorf("idle creates, updates and finds: %d, want 0", got-calls)
	}
	t.Logf("%d observes for 20 objects in %d periods of %s", total, periods, period)
}

// Nothing is due, nothing is called: with a 1-hour period, a change to
// every object's labels, and a restart of the operator (a new Reconciler,
// which remembers nothing), make no call at all.
func TestNoCallsWhileNothingIsDue(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	stop := start(t, "ext-notdue", ns, external.New(connectTo(finder{s}), external.WithPeriod(time.Hour)), &observability.FakeRecorder{})
	ws := newWidgets(t, ns, 20, nil)
	allReady(t, ws, 30*time.Second)
	settled := s.count("observe")
	for _, w := range ws {
		w := get(t, w)
		w.Labels["touched"] = "yes"
		if err := cluster.Client().Update(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second)
	stop()
	// controller-runtime wants a new name for a controller in the same
	// process; the objects are the same.
	start(t, "ext-notdue-restarted", ns, external.New(connectTo(finder{s}), external.WithPeriod(time.Hour)), &observability.FakeRecorder{})
	time.Sleep(3 * time.Second)
	if got := s.count("observe") - settled; got != 0 {
		t.Errorf("observes after label changes and a restart: %d, want 0", got)
	}
	if got := s.count("create"); got != 20 {
		t.Errorf("creates: %d, want 20", got)
	}
}

// A process killed between the provider's create and the recording of its
// ID leaves the pending mark: a Finder resolves it (the resource found is
// recorded, nothing created), and finding none means none was made.
func TestPendingCreateResolvedByFind(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	ws := newWidgets(t, ns, 2, map[string]string{external.PendingAnnotation: "2026-11-28T06:00:00Z"})
	// What the dead process made for the first, and never recorded.
	s.res["made-before-crash"] = &resource{key: string(ws[0].UID), size: 1}
	start(t, "ext-pending", ns, external.New(connectTo(finder{s})), &observability.FakeRecorder{})
	ids := allReady(t, ws, 30*time.Second)
	if ids[0] != "made-before-crash" {
		t.Errorf("first Widget records %q, want the resource made before the crash", ids[0])
	}
	if got := s.count("create"); got != 1 {
		t.Errorf("creates: got %d, want 1 (the second Widget's: none was found for it)", got)
	}
	if diff := cmp.Diff(keysOf(ws), s.live()); diff != "" {
		t.Errorf("resources by key (-want +got):\n%s", diff)
	}
	for _, w := range ws {
		if v, ok := get(t, w).Annotations[external.PendingAnnotation]; ok {
			t.Errorf("%s still has the pending mark %q", w.Name, v)
		}
	}
}

// Without a Finder a pending create is never repeated blindly: the object
// is Stalled, reason CreateOutcomeUnknown, naming the key and both ways
// out; removing the mark creates it.
func TestPendingCreateWithoutFinderStalls(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	ws := newWidgets(t, ns, 1, map[string]string{external.PendingAnnotation: "2026-11-28T06:00:00Z"})
	start(t, "ext-nofind", ns, external.New(connectTo(noFinder{finder{s}})), &observability.FakeRecorder{})
	eventually(t, 20*time.Second, "Stalled CreateOutcomeUnknown", func() error {
		c := status.Get(get(t, ws[0]), status.Stalled)
		if c == nil || c.Reason != "CreateOutcomeUnknown" {
			return fmt.Errorf("Stalled is %v", c)
		}
		for _, part := range []string{string(ws[0].UID), external.NameAnnotation, external.PendingAnnotation} {
			if !strings.Contains(c.Message, part) {
				return fmt.Errorf("message %q does not name %q", c.Message, part)
			}
		}
		return nil
	})
	if got := s.count("create"); got != 0 {
		t.Fatalf("creates while the outcome is unknown: %d", got)
	}
	w := get(t, ws[0])
	delete(w.Annotations, external.PendingAnnotation)
	if err := cluster.Client().Update(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	allReady(t, ws, 20*time.Second)
	if got := s.count("create"); got != 1 {
		t.Errorf("creates after the mark was removed: %d, want 1", got)
	}
}

// Someone edits the object between the provider's create and the ID's
// recording (the recording's optimistic lock fails): the ID is recorded
// anyway, on the newer object, and nothing is created twice.
func TestIDRecordedPastAConcurrentEdit(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	var edits atomic.Int32
	ws := newWidgets(t, ns, 1, nil)
	s.afterCreate = func(string, string) error {
		edits.Add(1)
		w := get(t, ws[0])
		w.Labels["edited"] = "meanwhile"
		return cluster.Client().Update(context.Background(), w)
	}
	start(t, "ext-edit", ns, external.New(connectTo(finder{s})), &observability.FakeRecorder{})
	allReady(t, ws, 20*time.Second)
	if got := s.count("create"); got != 1 {
		t.Errorf("creates: %d, want 1", got)
	}
	if got := get(t, ws[0]).Labels["edited"]; got != "meanwhile" || edits.Load() != 1 {
		t.Errorf("the concurrent edit: label %q, %d edits", got, edits.Load())
	}
	// The recording read the newer object and wrote on it: no reconcile
	// failed over the conflict.
	for _, result := range []string{"conflict", "error"} {
		if got := counter(t, "kopgo_reconcile_total", map[string]string{"controller": "ext-edit", "result": result}); got != 0 {
			t.Errorf("reconciles with result %s: %v, want 0", result, got)
		}
	}
}

// A create that fails for sure (a 503) made nothing: the mark is removed
// and the create retried, without a Finder. One that times out after the
// provider acted leaves the outcome unknown: the Finder finds it.
func TestFailedCreates(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	failed := map[string]bool{}
	s.createFails = func(key string) error {
		if failed[key] {
			return nil
		}
		failed[key] = true
		return koperrors.Errorf(koperrors.Unavailable, "503 Service Unavailable")
	}
	ws := newWidgets(t, ns, 5, nil)
	start(t, "ext-failed", ns, external.New(connectTo(noFinder{finder{s}})), &observability.FakeRecorder{})
	allReady(t, ws, 30*time.Second)
	if got := s.count("create"); got != 10 {
		t.Errorf("creates: %d, want 10 (5 failed, 5 retried)", got)
	}
	if diff := cmp.Diff(keysOf(ws), s.live()); diff != "" {
		t.Errorf("resources by key (-want +got):\n%s", diff)
	}

	ns2 := cluster.Namespace(t)
	s2 := newSystem()
	timedOut := onceEach{}
	s2.afterCreate = func(key, _ string) error {
		if !timedOut.first(key) {
			return nil
		}
		return koperrors.WrapKind(koperrors.Timeout, context.DeadlineExceeded, "create", kopmeta.ObjectRef{})
	}
	ws2 := newWidgets(t, ns2, 5, nil)
	start(t, "ext-timeout", ns2, external.New(connectTo(finder{s2})), &observability.FakeRecorder{})
	allReady(t, ws2, 30*time.Second)
	if got := externalCalls(t, "ext-timeout", "create", "timeout"); got != 5 {
		t.Errorf("timed-out creates counted: %v, want 5", got)
	}
	if got, finds := s2.count("create"), s2.count("find"); got != 5 || finds != 10 {
		t.Errorf("creates %d, finds %d; want 5 and 10 (a Find before each create, and each timed-out create found, not repeated)", got, finds)
	}
	if diff := cmp.Diff(keysOf(ws2), s2.live()); diff != "" {
		t.Errorf("resources by key (-want +got):\n%s", diff)
	}
	// A 502 from a gateway after the system stored the resource: with a
	// Finder the mark stays, Find finds it, nothing is created twice.
	ns3 := cluster.Namespace(t)
	s3 := newSystem()
	failedAfter := onceEach{}
	s3.afterCreate = func(key, _ string) error {
		if !failedAfter.first(key) {
			return nil
		}
		return koperrors.Errorf(koperrors.Unavailable, "502 Bad Gateway")
	}
	ws3 := newWidgets(t, ns3, 5, nil)
	start(t, "ext-502", ns3, external.New(connectTo(finder{s3})), &observability.FakeRecorder{})
	allReady(t, ws3, 30*time.Second)
	if got, finds := s3.count("create"), s3.count("find"); got != 5 || finds != 10 {
		t.Errorf("creates %d, finds %d; want 5 and 10 (a Find before each create, and each create that failed after the write found, not repeated)", got, finds)
	}
	if diff := cmp.Diff(keysOf(ws3), s3.live()); diff != "" {
		t.Errorf("resources by key (-want +got):\n%s", diff)
	}
}

// Deletion holds the object until the resource is observed gone, and
// deletes nothing it did not make.
func TestDeletionWaitsUntilGone(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	s.deleteLag = 2
	s.res["someone-elses"] = &resource{key: "not-ours", size: 5}
	rec := &observability.FakeRecorder{}
	start(t, "ext-delete", ns, external.New(connectTo(finder{s}), external.WithPeriod(time.Second)), rec)
	ws := newWidgets(t, ns, 5, nil)
	allReady(t, ws, 30*time.Second)
	for _, w := range ws {
		if err := cluster.Client().Delete(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "every Widget gone", func() error {
		gone := 0
		for _, w := range ws {
			err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(w), &widget.Widget{})
			if koperrors.KindOf(err) != koperrors.NotFound {
				continue
			}
			gone++
			if s.has(string(w.UID)) {
				t.Errorf("%s is gone before its resource", w.Name)
			}
		}
		if gone < len(ws) {
			return fmt.Errorf("%d of %d gone", gone, len(ws))
		}
		return nil
	})
	if got := s.live(); len(got) != 1 || got[0] != "not-ours" {
		t.Errorf("left at the provider: %v, want only someone else's", got)
	}
	if got := countEvents(rec, "Deleted"); got != 5 {
		t.Errorf("Deleted events: %d, want 5", got)
	}
}

// onceEach tells, safely from concurrent reconciles, whether a key is seen
// for the first time (afterCreate hooks run outside the system's lock).
type onceEach struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (o *onceEach) first(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen[key] {
		return false
	}
	if o.seen == nil {
		o.seen = map[string]bool{}
	}
	o.seen[key] = true
	return true
}

// countEvents counts rec's events with reason.
func countEvents(rec *observability.FakeRecorder, reason string) int {
	n := 0
	for _, e := range rec.Events() {
		if e.Reason == reason {
			n++
		}
	}
	return n
}

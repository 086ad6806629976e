package external_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// 4 Observe calls that hang (ignoring their context) on a controller of 4
// workers: every other object becomes Ready, and the hung ones show
// Reconciling naming the call. Before: the 4 workers hung with the calls,
// and no other object was ever reconciled.
func TestHungCallsDoNotStallOthers(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	ws := newWidgets(t, ns, 10, nil)
	hung := map[string]bool{}
	for _, w := range ws[:4] {
		hung[string(w.UID)] = true
	}
	s.before = func(op, uid string) error {
		if op == "observe" && hung[uid] {
			<-release
		}
		return nil
	}
	startWith(t, "ext-hung", ns, external.New(connectTo(finder{s}), external.WithCallTimeout(time.Second)),
		func(b *kopcontroller.Builder[*widget.Widget]) *kopcontroller.Builder[*widget.Widget] {
			return b.Concurrency(4)
		})
	allReady(t, ws[4:], 30*time.Second)
	eventually(t, 20*time.Second, "the hung objects Reconciling, naming the call", func() error {
		for _, w := range ws[:4] {
			c := status.Get(get(t, w), status.Reconciling)
			if c == nil || c.Status != "True" || !strings.Contains(c.Message, "observe") {
				return fmt.Errorf("%s: Reconciling is %v", w.Name, c)
			}
		}
		return nil
	})
	for _, w := range ws[:4] {
		t.Logf("%s: %s", w.Name, status.Get(get(t, w), status.Reconciling).Message)
	}
}

// 100 objects, their calls answered 503 one time in ten, and two creates
// answered 429 with Retry-After 2 s: no call reaches the system within a
// 429's Retry-After (the calls that were already on their way when it was
// answered, within 250 ms, are logged, not counted), whichever object
// makes it. Before: only the object that got the 429 waited.
func TestRetryAfterHeldPerSystem(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	var mu sync.Mutex
	n, creates := 0, 0
	var limited []time.Time
	s.before = func(op, _ string) error {
		mu.Lock()
		defer mu.Unlock()
		n++
		if op == "create" {
			creates++
		}
		switch {
		case op == "create" && (creates == 20 || creates == 60):
			limited = append(limited, time.Now())
			return answer(http.StatusTooManyRequests, "2")
		case n%10 == 5:
			return answer(http.StatusServiceUnavailable, "")
		}
		return nil
	}
	ws := newWidgets(t, ns, 100, nil)
	start(t, "ext-429", ns, external.New(connectTo(finder{s})), &observability.FakeRecorder{})
	allReady(t, ws, 120*time.Second)
	mu.Lock()
	defer mu.Unlock()
	if len(limited) == 0 {
		t.Fatal("no 429 answered")
	}
	const inFlight = 250 * time.Millisecond
	for _, at := range limited {
		early, onTheirWay := 0, 0
		for _, c := range s.callLog() {
			switch d := c.at.Sub(at); {
			case d > 0 && d < inFlight:
				onTheirWay++
			case d >= inFlight && d < 2*time.Second:
				early++
			}
		}
		t.Logf("429 at %s: %d calls within its Retry-After, %d on their way within %s", at.Format("15:04:05.000"), early, onTheirWay, inFlight)
		if early != 0 {
			t.Errorf("429 at %s: %d calls within its Retry-After of 2 s, want 0", at.Format("15:04:05.000"), early)
		}
	}
	t.Logf("%d calls for 100 objects", len(s.callLog()))
}

// With a limit of 10 calls a second and a burst of 5, 30 new objects
// (90 calls) reach the system at no more than 15 calls in any second.
// Before: no limit (the issue measured 35 to 69 a second).
func TestRateLimitPerSystem(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	start(t, "ext-rate", ns, external.New(connectTo(finder{s}), external.WithRateLimit(10, 5)), &observability.FakeRecorder{})
	ws := newWidgets(t, ns, 30, nil)
	allReady(t, ws, 60*time.Second)
	log := s.callLog()
	peak := 0
	for i := range log {
		k := 0
		for j := i; j < len(log) && log[j].at.Sub(log[i].at) < time.Second; j++ {
			k++
		}
		peak = max(peak, k)
	}
	t.Logf("%d calls, peak %d in one second", len(log), peak)
	if peak > 15 {
		t.Errorf("peak calls in one second: %d, want at most 10+5", peak)
	}
}

// named is finder with a name for its system (SystemNamer).
type named struct {
	finder
	name string
}

func (n named) System() string { return n.name }

// A 429 holds the system that answered it, not another: of the objects
// made during its Retry-After, those whose Client names another system are
// created meanwhile, those of the same system wait. Without the hold per
// system: 7 calls to system a within its Retry-After.
func TestRetryAfterHoldsOnlyItsSystem(t *testing.T) {
	ns := cluster.Namespace(t)
	sa, sb := newSystem(), newSystem()
	var mu sync.Mutex
	var limited time.Time
	sa.before = func(op, _ string) error {
		mu.Lock()
		defer mu.Unlock()
		if op == "create" && limited.IsZero() {
			limited = time.Now()
			return answer(http.StatusTooManyRequests, "3")
		}
		return nil
	}
	connect := func(_ context.Context, w *widget.Widget, _ *reconciler.Env) (external.Client[*widget.Widget], error) {
		if strings.HasPrefix(w.Name, "b") {
			return named{finder{sb}, "b.example.com"}, nil
		}
		return named{finder{sa}, "a.example.com"}, nil
	}
	start(t, "ext-429-systems", ns, external.New(connect), &observability.FakeRecorder{})
	wa := newWidgets(t, ns, 5, nil)
	eventually(t, 20*time.Second, "system a answered 429", func() error {
		mu.Lock()
		defer mu.Unlock()
		if limited.IsZero() {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	// New objects of both systems come after a's 429.
	var wb []*widget.Widget
	for i := range 10 {
		name := fmt.Sprintf("b%03d", i/2)
		if i%2 == 0 {
			name = fmt.Sprintf("a%03d", i/2)
		}
		w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{"ext": ns}}, Spec: widget.WidgetSpec{Size: 1}}
		if err := cluster.Client().Create(t.Context(), w); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			wa = append(wa, w)
		} else {
			wb = append(wb, w)
		}
	}
	allReady(t, wb, 30*time.Second)
	allReady(t, wa, 30*time.Second)
	mu.Lock()
	defer mu.Unlock()
	inA, inB := 0, 0
	for _, c := range sa.callLog() {
		if c.at.After(limited.Add(250*time.Millisecond)) && c.at.Before(limited.Add(3*time.Second)) {
			inA++
		}
	}
	for _, c := range sb.callLog() {
		if c.at.After(limited) && c.at.Before(limited.Add(3*time.Second)) {
			inB++
		}
	}
	t.Logf("within system a's Retry-After of 3 s: %d calls to a, %d to b", inA, inB)
	if inA != 0 {
		t.Errorf("calls to system a within its Retry-After: %d, want 0", inA)
	}
	if inB == 0 {
		t.Error("no call to system b within system a's Retry-After: b was held too")
	}
}

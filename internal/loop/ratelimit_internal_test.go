package loop

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// An object that failed through an outage (transient failures, capped at
// 3 s) and then meets another failure backs off from the start for it,
// not from a count the outage drove up: after 40 transient failures, the
// next other failure waits milliseconds, not 5 minutes.
func TestOutageDoesNotInflateTheNextBackoff(t *testing.T) {
	r := newRateLimiter()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "w"}}
	for range 40 {
		r.failed(req, false, 0, true)
		if d := r.When(req); d > transientMax {
			t.Fatalf("transient failure waits %s, want at most %s", d, transientMax)
		}
	}
	r.failed(req, false, 0, false)
	if d := r.When(req); d > time.Second {
		t.Errorf("the first failure after an outage waits %s, want the start of the backoff", d)
	}
	if n := r.NumRequeues(req); n != 41 {
		t.Errorf("NumRequeues = %d, want 41", n)
	}
	r.Forget(req)
	if n := r.NumRequeues(req); n != 0 {
		t.Errorf("NumRequeues after Forget = %d, want 0", n)
	}
}

// A delay the reconciler asked for wins; without one, failures double.
func TestRateLimiterSchedule(t *testing.T) {
	r := newRateLimiter()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "w"}}
	r.failed(req, true, 30*time.Second, false)
	if d := r.When(req); d != 30*time.Second {
		t.Errorf("asked-for delay: %s, want 30s", d)
	}
	var last time.Duration
	for i := range 5 {
		r.failed(req, false, 0, false)
		d := r.When(req)
		if i > 0 && d < 2*last {
			t.Errorf("failure %d waits %s after %s: not doubling", i, d, last)
		}
		last = d
	}
}

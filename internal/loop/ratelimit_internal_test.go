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
		r.failed(req, hint{transient: true})
		if d := r.When(req); d > transientMax {
			t.Fatalf("transient failure waits %s, want at most %s", d, transientMax)
		}
	}
	r.failed(req, hint{})
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
	r.failed(req, hint{after: 30 * time.Second})
	if d := r.When(req); d != 30*time.Second {
		t.Errorf("asked-for delay: %s, want 30s", d)
	}
	var last time.Duration
	for i := range 5 {
		r.failed(req, hint{})
		d := r.When(req)
		if i > 0 && d < 2*last {
			t.Errorf("failure %d waits %s after %s: not doubling", i, d, last)
		}
		last = d
	}
}

// The error's own delay is a floor under every schedule: the backoff, the
// outage cap and a delay asked for (the policy's) alike.
func TestRateLimiterErrorDelayIsAFloor(t *testing.T) {
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "w"}}
	tests := []struct {
		name string
		h    hint
		want time.Duration
	}{
		{"over the backoff", hint{atLeast: 2 * time.Second}, 2 * time.Second},
		{"over the outage cap", hint{atLeast: 10 * time.Second, transient: true}, 10 * time.Second},
		{"over a shorter delay asked for", hint{after: time.Second, atLeast: 2 * time.Second}, 2 * time.Second},
		{"under a longer delay asked for", hint{after: 30 * time.Second, atLeast: 2 * time.Second}, 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRateLimiter()
			r.failed(req, tt.h)
			if d := r.When(req); d != tt.want {
				t.Errorf("When = %s, want %s", d, tt.want)
			}
		})
	}
}

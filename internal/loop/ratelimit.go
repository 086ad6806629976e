package loop

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The retry schedule of the loop's rate limiter.
const (
	backoffBase = 5 * time.Millisecond
	backoffMax  = 5 * time.Minute
	// transientMax caps the backoff of an object whose last failure was
	// the API server being unreachable or slow.
	transientMax = 3 * time.Second
	bucketQPS    = 10
	bucketBurst  = 100
)

// rateLimiter is controller-runtime's default schedule (per-item
// exponential backoff, overall token bucket) with three kopgo rules: a
// delay the reconciler (or its ErrorPolicy) asked for replaces the
// backoff, outages do not grow the backoff past transientMax, and neither
// comes sooner than the delay the error carries (a provider's
// Retry-After). The loop tells it about each failure
// ([rateLimiter.failed]) just before controller-runtime asks When.
type rateLimiter struct {
	mu sync.Mutex
	// failures counts failures in a row, and transient those of them that
	// were transient: each kind backs off on its own count, so an outage
	// does not leave a long backoff behind for the first other failure
	// after it.
	failures, transient map[reconcile.Request]int
	hints               map[reconcile.Request]hint
	// kept are objects whose next Forget is not a success (a reconcile
	// deferred for a lagging cache): their failures are kept.
	kept   map[reconcile.Request]struct{}
	bucket *rate.Limiter
}

// hint is how the loop wants an object's next attempt after a failure
// timed ([classify] decides it).
type hint struct {
	after     time.Duration // asked for (the reconciler's delay, else the policy's), instead of the backoff; 0: none
	atLeast   time.Duration // the earliest retry whatever the schedule (the error's own delay); 0: none
	transient bool          // the API server was away: the backoff stays within transientMax
}

func newRateLimiter() *rateLimiter {
	return &rateLimiter{
		failures:  map[reconcile.Request]int{},
		transient: map[reconcile.Request]int{},
		hints:     map[reconcile.Request]hint{},
		kept:      map[reconcile.Request]struct{}{},
		bucket:    rate.NewLimiter(rate.Limit(bucketQPS), bucketBurst),
	}
}

// failed records how the loop wants req's next attempt timed.
func (r *rateLimiter) failed(req reconcile.Request, h hint) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hints[req] = h
}

// When returns how long req waits before its next attempt.
func (r *rateLimiter) When(req reconcile.Request) time.Duration {
	r.mu.Lock()
	h, ok := r.hints[req]
	delete(r.hints, req)
	transient := ok && h.transient
	n := r.failures[req] - r.transient[req] // other failures so far
	if transient {
		n = r.transient[req]
	}
	r.failures[req]++
	if transient {
		r.transient[req]++
	}
	r.mu.Unlock()
	if h.after > 0 {
		return max(h.after, h.atLeast)
	}
	d := backoffBase * time.Duration(math.Pow(2, float64(min(n, 30))))
	if d > backoffMax || d <= 0 {
		d = backoffMax
	}
	if transient {
		d = min(d, transientMax)
	} else {
		d = max(d, r.bucket.Reserve().Delay())
	}
	return max(d, h.atLeast)
}

// keepFailures makes the next Forget of req keep its failures.
func (r *rateLimiter) keepFailures(req reconcile.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failures[req] > 0 {
		r.kept[req] = struct{}{}
	}
}

// Forget clears req's failure count (after a success).
func (r *rateLimiter) Forget(req reconcile.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.kept[req]; ok {
		delete(r.kept, req)
		return
	}
	delete(r.failures, req)
	delete(r.transient, req)
	delete(r.hints, req)
}

// drop forgets everything about req (its object is gone).
func (r *rateLimiter) drop(req reconcile.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.kept, req)
	delete(r.failures, req)
	delete(r.transient, req)
	delete(r.hints, req)
}

// size is the number of objects with anything kept (for tests).
func (r *rateLimiter) size() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.failures) + len(r.transient) + len(r.hints) + len(r.kept)
}

// NumRequeues returns req's failures in a row.
func (r *rateLimiter) NumRequeues(req reconcile.Request) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[req]
}

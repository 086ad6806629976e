package loop

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/reconciler"
)

// httpFailure is what FromHTTP makes of a response of code with a
// Retry-After header (none when "").
func httpFailure(code int, retryAfter string) error {
	h := http.Header{}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return koperrors.FromHTTP(&http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader(""))})
}

// nextAttempt is when a decision has the object's next attempt come, on
// its first failure: the loop's own requeue for a terminal failure, else
// the rate limiter's delay.
func nextAttempt(d decision) time.Duration {
	if d.terminal {
		return d.self
	}
	r := newRateLimiter()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "w"}}
	r.failed(req, d.retry)
	return r.When(req)
}

// The reason of the Warning event is the error's (ReasonOf), and a failure
// is retried no sooner than the delay its error carries, unless the
// reconciler returned a delay of its own: max(error's delay, policy or
// backoff).
func TestClassifyHonoursTheErrorsReasonAndDelay(t *testing.T) {
	limited := httpFailure(http.StatusTooManyRequests, "2")
	tests := []struct {
		name    string
		action  reconciler.Action
		err     error
		policy  time.Duration
		warning string
		next    time.Duration
	}{
		{"plain failure: the backoff", reconciler.Done(), errors.New("x"), 0, "Internal", backoffBase},
		{"429 Retry-After 2: not before 2s", reconciler.Done(), limited, 0, "Unavailable", 2 * time.Second},
		{"429 Retry-After 2, asking for a requeue", reconciler.Requeue(), limited, 0, "Unavailable", 2 * time.Second},
		{"429 Retry-After 2, policy 30s: the policy", reconciler.Done(), limited, 30 * time.Second, "Unavailable", 30 * time.Second},
		{"429 Retry-After 2, policy 1s: the error's delay", reconciler.Done(), limited, time.Second, "Unavailable", 2 * time.Second},
		{"429 Retry-After 2, RequeueAfter 500ms: the reconciler's", reconciler.RequeueAfter(500 * time.Millisecond), limited, 0, "Unavailable", 500 * time.Millisecond},
		{"429 without Retry-After: the backoff", reconciler.Done(), httpFailure(http.StatusTooManyRequests, ""), 0, "Unavailable", backoffBase},
		{"marked with a reason", reconciler.Done(), koperrors.WithReason(limited, "RateLimited"), 0, "RateLimited", 2 * time.Second},
		{"401: Stalled, reason Unauthorized", reconciler.Done(), httpFailure(http.StatusUnauthorized, ""), 0, "Unauthorized", 10 * time.Minute},
		{"terminal with a reason", reconciler.Done(), koperrors.Terminal(koperrors.WithReason(errors.New("x"), "QuotaExceeded")), 0, "QuotaExceeded", 10 * time.Minute},
		{"terminal with a delay past the Stalled retry", reconciler.Done(), httpFailure(http.StatusUnauthorized, "3600"), 0, "Unauthorized", time.Hour},
		{"terminal with a delay, RequeueAfter 1m: the reconciler's", reconciler.RequeueAfter(time.Minute), httpFailure(http.StatusUnauthorized, "3600"), 0, "Unauthorized", time.Minute},
		{"403 with Retry-After 30: a quota, waited for", reconciler.Done(), httpFailure(http.StatusForbidden, "30"), 0, "Unavailable", 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := attempt{phase: phaseReconcile, action: tt.action, err: tt.err, policy: tt.policy, failures: 1}
			d := classify(a, Options{StalledRetry: 10 * time.Minute})
			if d.warning != tt.warning {
				t.Errorf("Warning event reason %q, want %q", d.warning, tt.warning)
			}
			if got := nextAttempt(d); got != tt.next {
				t.Errorf("next attempt after %s, want %s", got, tt.next)
			}
		})
	}
}

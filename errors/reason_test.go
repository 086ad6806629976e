package errors_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// A reason, and everything else a loop reads from the error, survive
// every kind of wrapping.
func TestReasonThroughWrapping(t *testing.T) {
	cause := apierrors.NewNotFound(gr, "web")
	marked := koperrors.WithReason(cause, "SecretMissing")
	unauthorized := koperrors.FromHTTP(response(http.StatusUnauthorized, nil, ""))
	limited := koperrors.FromHTTP(response(http.StatusTooManyRequests, http.Header{"Retry-After": {"2"}}, ""))
	obj := kopmeta.ObjectRef{Kind: "Widget", Namespace: "ns", Name: "w"}
	tests := []struct {
		name string
		err  error
		want httpOutcome
	}{
		{"nil", nil, httpOutcome{Nil: true}},
		{"WithReason nil", koperrors.WithReason(nil, "Anything"), httpOutcome{Nil: true}},
		{"no reason: the kind", cause, httpOutcome{Kind: "NotFound", Reason: "NotFound"}},
		{"plain error: Internal", errors.New("x"), httpOutcome{Kind: "Internal", Reason: "Internal"}},
		{"marked", marked, httpOutcome{Kind: "NotFound", Reason: "SecretMissing"}},
		{"%w", fmt.Errorf("read secret: %w", marked), httpOutcome{Kind: "NotFound", Reason: "SecretMissing"}},
		{"errors.Join, first", errors.Join(marked, errors.New("other")), httpOutcome{Kind: "NotFound", Reason: "SecretMissing"}},
		{"errors.Join, second", errors.Join(errors.New("other"), marked), httpOutcome{Kind: "NotFound", Reason: "SecretMissing"}},
		{"Terminal outside", koperrors.Terminal(marked), httpOutcome{Kind: "NotFound", Terminal: true, Reason: "SecretMissing"}},
		{"Terminal inside", koperrors.WithReason(koperrors.Terminal(cause), "SecretMissing"), httpOutcome{Kind: "NotFound", Terminal: true, Reason: "SecretMissing"}},
		{"Wrap", koperrors.Wrap(marked, "read", obj), httpOutcome{Kind: "NotFound", Reason: "SecretMissing"}},
		{"WrapKind keeps the reason", koperrors.WrapKind(koperrors.Invalid, marked, "read", obj), httpOutcome{Kind: "Invalid", Reason: "SecretMissing"}},
		{"outermost wins", koperrors.WithReason(fmt.Errorf("x: %w", marked), "Outer"), httpOutcome{Kind: "NotFound", Reason: "Outer"}},
		{"FromHTTP 401", unauthorized, httpOutcome{Kind: "Forbidden", Terminal: true, Reason: "Unauthorized"}},
		{"FromHTTP 401 wrapped", koperrors.Wrap(fmt.Errorf("call provider: %w", unauthorized), "observe", obj), httpOutcome{Kind: "Forbidden", Terminal: true, Reason: "Unauthorized"}},
		{"FromHTTP 401 in a Join", errors.Join(errors.New("other"), unauthorized), httpOutcome{Kind: "Forbidden", Terminal: true, Reason: "Unauthorized"}},
		{"WithReason over FromHTTP", koperrors.WithReason(unauthorized, "TokenExpired"), httpOutcome{Kind: "Forbidden", Terminal: true, Reason: "TokenExpired"}},
		{"FromHTTP 429: reason follows the kind", koperrors.WrapKind(koperrors.Timeout, limited, "create", obj), httpOutcome{Kind: "Timeout", Reason: "Timeout", Delay: 2 * time.Second}},
		{"delay through %w, Join, Terminal, Wrap, WithReason",
			koperrors.Wrap(koperrors.Terminal(koperrors.WithReason(errors.Join(errors.New("x"), fmt.Errorf("y: %w", limited)), "RateLimited")), "create", obj),
			httpOutcome{Kind: "Unavailable", Terminal: true, Reason: "RateLimited", Delay: 2 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, httpOutcomeOf(tt.err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// WithReason leaves the message, errors.Is and errors.As alone.
func TestWithReasonKeepsTheError(t *testing.T) {
	cause := apierrors.NewNotFound(gr, "web")
	err := koperrors.WithReason(fmt.Errorf("read: %w", cause), "SecretMissing")
	if err.Error() != "read: "+cause.Error() {
		t.Errorf("message %q changed", err)
	}
	if !errors.Is(err, cause) || !apierrors.IsNotFound(err) {
		t.Error("the cause is not reachable")
	}
	if _, ok := errors.AsType[*apierrors.StatusError](err); !ok {
		t.Error("errors.As does not find the *StatusError")
	}
	if _, ok := koperrors.RetryAfterOf(err); ok {
		t.Error("an error without Retry-After carries a delay")
	}
}

// An invalid reason is replaced by the error's kind (never a panic, never
// a condition the API server would refuse).
func TestWithReasonValidates(t *testing.T) {
	cause := koperrors.Errorf(koperrors.Unavailable, "provider down")
	tests := []struct {
		reason string
		want   string
	}{
		{"ProviderDown", "ProviderDown"},
		{"A", "A"},
		{"Quota_Exceeded", "Quota_Exceeded"},
		{"Rate:Limited,Twice", "Rate:Limited,Twice"},
		{"Error404", "Error404"},
		{strings.Repeat("A", 1024), strings.Repeat("A", 1024)},
		{"", "Unavailable"},
		{"providerDown", "Unavailable"},
		{"Provider Down", "Unavailable"},
		{"Provider-Down", "Unavailable"},
		{"ProviderDown:", "Unavailable"},
		{"ProviderDown,", "Unavailable"},
		{"1stTry", "Unavailable"},
		{"_Private", "Unavailable"},
		{"Ünicode", "Unavailable"},
		{strings.Repeat("A", 1025), "Unavailable"},
	}
	for _, tt := range tests {
		name := tt.reason
		if len(name) > 20 {
			name = fmt.Sprintf("%d bytes", len(name))
		}
		t.Run(name, func(t *testing.T) {
			got := koperrors.ReasonOf(koperrors.WithReason(cause, tt.reason))
			if got != tt.want {
				t.Errorf("ReasonOf(WithReason(err, %q)) = %q, want %q", tt.reason, got, tt.want)
			}
			// Whatever ReasonOf returns, the API server accepts as a reason.
			c := metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: got, LastTransitionTime: metav1.Now()}
			if errs := metav1validation.ValidateCondition(c, field.NewPath("status", "conditions")); len(errs) > 0 {
				t.Errorf("ReasonOf = %q is not a valid condition reason: %v", got, errs)
			}
		})
	}
	t.Run("invalid outer mark hides an inner one", func(t *testing.T) {
		err := koperrors.WithReason(koperrors.WithReason(cause, "Inner"), "not valid")
		if got := koperrors.ReasonOf(err); got != "Unavailable" {
			t.Errorf("ReasonOf = %q, want the kind, Unavailable", got)
		}
	})
}

// WithRetryAfter carries a delay through wrapping and keeps the rest of
// the error; an hour at most, the outermost wins, nothing for d <= 0.
func TestWithRetryAfter(t *testing.T) {
	cause := koperrors.Errorf(koperrors.Unavailable, "throttled")
	err := fmt.Errorf("create: %w", koperrors.WithRetryAfter(cause, 3*time.Second))
	if d, ok := koperrors.RetryAfterOf(err); !ok || d != 3*time.Second {
		t.Errorf("RetryAfterOf = %s, %v, want 3s", d, ok)
	}
	if err.Error() != "create: throttled" || koperrors.KindOf(err) != koperrors.Unavailable || !errors.Is(err, cause) {
		t.Errorf("the error changed: %q, kind %s", err, koperrors.KindOf(err))
	}
	if d, _ := koperrors.RetryAfterOf(koperrors.WithRetryAfter(cause, 48*time.Hour)); d != time.Hour {
		t.Errorf("48h capped to %s, want 1h", d)
	}
	if d, _ := koperrors.RetryAfterOf(koperrors.WithRetryAfter(koperrors.WithRetryAfter(cause, time.Second), time.Minute)); d != time.Minute {
		t.Errorf("outermost delay %s, want 1m", d)
	}
	if !errors.Is(koperrors.WithRetryAfter(cause, 0), cause) || koperrors.WithRetryAfter(nil, time.Second) != nil {
		t.Error("a zero delay or a nil error is not returned as is")
	}
	if term := koperrors.WithRetryAfter(koperrors.Terminal(cause), time.Second); !koperrors.IsTerminal(term) {
		t.Error("the mark hides Terminal")
	}
}

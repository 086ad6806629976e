package loop_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/loop"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// providerResponse is a provider's answer of code to POST /v1/records.
func providerResponse(code int, retryAfter string) *http.Response {
	u, _ := url.Parse("https://dns.example/v1/records")
	h := http.Header{}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader("")),
		Request: &http.Request{Method: http.MethodPost, URL: u}}
}

// A provider's 429 with Retry-After: 2 is retried after 2 s, not after the
// backoff's first 5 ms: a real controller-runtime controller runs the loop
// with its rate limiter against the API server, and the reconciler records
// when it is called.
func TestRetryAfterDelaysTheNextAttempt(t *testing.T) {
	ns := cluster.Namespace(t)
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: widget.WidgetSpec{Size: 1}}
	if err := cluster.Client().Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var calls []time.Time
	second := make(chan struct{})
	r := reconciler.Func[*widget.Widget](func(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, time.Now())
		if len(calls) == 2 {
			close(second)
		}
		return reconciler.Done(), koperrors.FromHTTP(providerResponse(http.StatusTooManyRequests, "2"))
	})
	m, err := observability.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	events := &observability.FakeRecorder{}
	env := &reconciler.Env{Client: client.WithFieldOwner(cluster.Client(), "test-controller"), Reader: cluster.Client(), Recorder: events, Scheme: cluster.Scheme()}
	l, err := loop.New[*widget.Widget]("retry-after", env, r, loop.Options{Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	c, err := crcontroller.NewUnmanaged("retry-after", l.ControllerOptions(crcontroller.Options{Reconciler: l, SkipNameValidation: new(true)}))
	if err != nil {
		t.Fatal(err)
	}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)}
	err = c.Watch(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		q.Add(req)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	}()

	select {
	case <-second:
	case <-time.After(15 * time.Second):
		t.Fatal("no second attempt within 15 s")
	}
	mu.Lock()
	gap := calls[1].Sub(calls[0])
	mu.Unlock()
	t.Logf("second attempt %s after the first", gap)
	if gap < 2*time.Second {
		t.Errorf("second attempt %s after the first, want at least the Retry-After of 2s", gap)
	}
	got := &widget.Widget{}
	if err := cluster.Client().Get(t.Context(), req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if condition(got, status.Ready) != "False/Unavailable" || condition(got, status.Reconciling) != "True/Unavailable" {
		t.Errorf("Ready %s Reconciling %s, want False/Unavailable and True/Unavailable", condition(got, status.Ready), condition(got, status.Reconciling))
	}
}

// A provider's 401 is a verdict: Stalled, with reason Unauthorized on the
// object's conditions and on the Warning event; the error_kind metric
// stays the kind.
func TestUnauthorizedIsStalledWithItsReason(t *testing.T) {
	h := newHarness(t, reconciler.Func[*widget.Widget](func(context.Context, *widget.Widget, *reconciler.Env) (reconciler.Action, error) {
		return reconciler.Done(), koperrors.FromHTTP(providerResponse(http.StatusUnauthorized, ""))
	}))
	if _, err := h.reconcile(); !koperrors.IsTerminal(err) {
		t.Fatalf("controller-runtime sees %v, want a terminal error", err)
	}
	got := h.get()
	if condition(got, status.Stalled) != "True/Unauthorized" || condition(got, status.Ready) != "False/Unauthorized" {
		t.Errorf("Stalled %s Ready %s, want True/Unauthorized and False/Unauthorized", condition(got, status.Stalled), condition(got, status.Ready))
	}
	if c := status.Get(got, status.Stalled); c == nil || c.Message != "dns.example POST /v1/records: 401 Unauthorized" {
		t.Errorf("Stalled %+v, want the provider's answer as message", c)
	}
	evs := h.events.Events()
	if len(evs) != 1 || evs[0].Type != "Warning" || evs[0].Reason != "Unauthorized" {
		t.Errorf("events %+v, want one Warning with reason Unauthorized", evs)
	}
	if h.errorsOfKind("forbidden") != 1 || h.count("terminal") != 1 {
		t.Errorf("kopgo_reconcile_errors_total{error_kind=forbidden} = %v, terminal reconciles %v; want 1, 1", h.errorsOfKind("forbidden"), h.count("terminal"))
	}
}

package external_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// validating is finder with a Validate that refuses a negative size.
type validating struct{ finder }

func (validating) Validate(_ context.Context, w *widget.Widget) error {
	if w.Spec.Size < 0 {
		return fmt.Errorf("spec.size: %d: must not be negative", w.Spec.Size)
	}
	return nil
}

// An invalid spec is Stalled with 0 calls to the system, a valid one
// edited to an invalid one too; and the invalid object can still be
// deleted (its resource with it).
func TestValidateBeforeAnyCall(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	start(t, "ext-validate", ns, external.New(connectTo(validating{finder{s}})), &observability.FakeRecorder{})
	ws := newWidgets(t, ns, 2, nil)
	allReady(t, ws, 30*time.Second)
	before := len(s.callLog())
	bad := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad", Labels: map[string]string{"ext": ns}},
		Spec: widget.WidgetSpec{Size: -1}}
	if err := cluster.Client().Create(t.Context(), bad); err != nil {
		t.Fatal(err)
	}
	edited := get(t, ws[0])
	edited.Spec.Size = -3
	if err := cluster.Client().Update(t.Context(), edited); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "both Stalled InvalidSpec naming the field", func() error {
		for _, w := range []*widget.Widget{bad, edited} {
			c := status.Get(get(t, w), status.Stalled)
			if c == nil || c.Reason != "InvalidSpec" || !strings.Contains(c.Message, "spec.size") || !strings.Contains(c.Message, ns+"/"+w.Name) {
				return fmt.Errorf("%s: Stalled is %v", w.Name, c)
			}
		}
		return nil
	})
	if got := len(s.callLog()) - before; got != 0 {
		t.Errorf("calls for invalid specs: %d, want 0", got)
	}
	deleteAndWait(t, bad, edited)
	if s.has(string(edited.UID)) {
		t.Error("the invalid object's resource was not deleted")
	}
	if got := s.callsBy("create", string(bad.UID)); got != 0 {
		t.Errorf("creates for the invalid object: %d, want 0", got)
	}
}

// tokenClient is finder that authenticates with a token (Credentialed):
// the system answers 401 to any other token than "good".
type tokenClient struct {
	finder
	token string
}

func (c tokenClient) Credentials() string { return c.token }

func (c tokenClient) Observe(ctx context.Context, w *widget.Widget, id string) (external.Observation, error) {
	if c.token != "good" {
		c.s.mu.Lock()
		c.s.log = append(c.s.log, call{op: "observe", uid: string(w.UID), at: time.Now()})
		c.s.mu.Unlock()
		return external.Observation{}, answer(401, "")
	}
	return c.finder.Observe(ctx, w, id)
}

// A Secret whose token is revoked re-checks at once the Ready objects that
// name it (period 1 h): all Stalled, Unauthorized; the objects naming
// another Secret get no call. Before: they stayed Ready until their next
// periodic check, up to an hour.
func TestSecretChangeRechecksReadyObjects(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	for _, name := range []string{"revoked", "kept"} {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: map[string]string{"token": "good"}}
		if err := cluster.Client().Create(t.Context(), sec); err != nil {
			t.Fatal(err)
		}
	}
	connect := func(ctx context.Context, w *widget.Widget, env *reconciler.Env) (external.Client[*widget.Widget], error) {
		var sec corev1.Secret
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Labels["secret"]}, &sec); err != nil {
			return nil, err
		}
		return tokenClient{finder{s}, string(sec.Data["token"])}, nil
	}
	r := external.New(connect, external.WithPeriod(time.Hour))
	startWith(t, "ext-secret", ns, r, func(b *kopcontroller.Builder[*widget.Widget]) *kopcontroller.Builder[*widget.Widget] {
		return b.References(&corev1.Secret{}, func(w *widget.Widget) []string { return []string{w.Labels["secret"]} })
	})
	ws := make([]*widget.Widget, 15)
	for i := range ws {
		secret := "revoked"
		if i >= 10 {
			secret = "kept"
		}
		ws[i] = &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("w%03d", i),
			Labels: map[string]string{"ext": ns, "secret": secret}}, Spec: widget.WidgetSpec{Size: 1}}
		if err := cluster.Client().Create(t.Context(), ws[i]); err != nil {
			t.Fatal(err)
		}
	}
	allReady(t, ws, 30*time.Second)
	before := make([]int, len(ws))
	for i, w := range ws {
		before[i] = s.callsBy("observe", string(w.UID))
	}
	var sec corev1.Secret
	if err := cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "revoked"}, &sec); err != nil {
		t.Fatal(err)
	}
	sec.Data["token"] = []byte("revoked-token")
	if err := cluster.Client().Update(t.Context(), &sec); err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	eventually(t, 20*time.Second, "the objects naming the revoked Secret Stalled Unauthorized", func() error {
		for _, w := range ws[:10] {
			if c := status.Get(get(t, w), status.Stalled); c == nil || c.Reason != "Unauthorized" {
				return fmt.Errorf("%s: Stalled is %v", w.Name, c)
			}
		}
		return nil
	})
	t.Logf("10 objects Stalled %s after the Secret's change (period 1 h)", time.Since(changed).Round(time.Millisecond))
	time.Sleep(time.Second)
	for i, w := range ws[10:] {
		if got := s.callsBy("observe", string(w.UID)) - before[10+i]; got != 0 {
			t.Errorf("%s (another Secret): %d observes, want 0", w.Name, got)
		}
		if !status.IsTrue(get(t, w), status.Ready) {
			t.Errorf("%s (another Secret) is not Ready", w.Name)
		}
	}
}

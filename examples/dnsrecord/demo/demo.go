// Package demo is the walkthrough `make demo-external` runs and its test
// checks: the DNSRecord operator, as a user bound only to its generated
// RBAC (Install), against the example's provider, and a DNSRecord's life
// shown with the provider's view beside the cluster's, every expectation
// checked (Walkthrough): a missing Secret, the record created, a change,
// drift behind the operator's back, a rotated token, a burst of provider
// faults, and the deletion.
//
// The provider is served in-process (httptest) rather than as
// cmd/provider's process: the walkthrough injects faults and drift through
// its Go API and reads its records directly, and there is one process less
// to stop. cmd/provider serves the same provider on its own, with the same
// controls under /admin/.
package demo

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kopgo/kopgo/examples/dnsrecord"
	v1 "github.com/kopgo/kopgo/examples/dnsrecord/api/v1alpha1"
	"github.com/kopgo/kopgo/examples/dnsrecord/provider"
	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/status"
)

// OperatorNamespace is the namespace of the operator's Role (leases,
// events), created by Install.
const OperatorNamespace = "dnsrecord-system"

// Install creates the operator's namespace and its generated RBAC
// (dnsrecord.RBAC), bound to user.
func Install(ctx context.Context, c client.Client, user string) error {
	cr, role, err := dnsrecord.RBAC()
	if err != nil {
		return err
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: OperatorNamespace}},
		cr,
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: cr.Name},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cr.Name}, Subjects: subject},
		role,
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: role.Namespace},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}, Subjects: subject},
	} {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("install %T %s: %w", o, client.ObjectKeyFromObject(o), err)
		}
	}
	return nil
}

// Token is the provider's token the walkthrough starts with.
const Token = "demo-token"

// Walkthrough walks DNSRecord www in namespace ns through its life with
// the operator running (its drift period is period) and provider p serving
// it, printing to out, and returns the first expectation not met. The
// operator's controller is named controller (for its metrics).
func Walkthrough(ctx context.Context, c client.Client, p *provider.Server, ns, controller string, period time.Duration, out io.Writer) error {
	w := &walk{ctx: ctx, c: c, p: p, out: out}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	rec := &v1.DNSRecord{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "www"}, Spec: v1.DNSRecordSpec{
		Zone: "example.com", Name: "www", Type: "A", Value: "192.0.2.10", SecretRef: v1.SecretReference{Name: "dns-credentials"}}}

	w.say("==> Creating DNSRecord %s/www (A 192.0.2.10) naming Secret dns-credentials, which does not exist yet", ns)
	if err := c.Create(ctx, rec); err != nil {
		return err
	}
	if err := w.condition(rec, status.Stalled, "SecretNotFound", 30*time.Second); err != nil {
		return err
	}

	w.say("\n==> Creating Secret dns-credentials with the provider's token")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dns-credentials"}, Data: map[string][]byte{v1.TokenKey: []byte(Token)}}
	if err := c.Create(ctx, secret); err != nil {
		return err
	}
	start := time.Now()
	if err := w.condition(rec, status.Ready, "", 30*time.Second); err != nil {
		return err
	}
	w.say("    Ready %s after the Secret appeared", since(start))
	id, err := w.provider(rec, "192.0.2.10", 5*time.Second)
	if err != nil {
		return err
	}

	w.say("\n==> Changing the value to 192.0.2.20")
	if err := w.patch(rec, func(r *v1.DNSRecord) { r.Spec.Value = "192.0.2.20" }); err != nil {
		return err
	}
	if _, err := w.provider(rec, "192.0.2.20", 20*time.Second); err != nil {
		return err
	}

	w.say("\n==> Drift: someone sets the record to 203.0.113.66 at the provider, behind the operator's back")
	if err := p.SetValue(id, "203.0.113.66"); err != nil {
		return err
	}
	start = time.Now()
	if _, err := w.provider(rec, "192.0.2.20", period*2+5*time.Second); err != nil {
		return err
	}
	w.say("    put back %s later (drift period %s)", since(start), period)
	w.say("\n==> Drift: someone deletes record %s at the provider", id)
	if err := p.Remove(id); err != nil {
		return err
	}
	start = time.Now()
	if err := w.until(period*2+5*time.Second, "the record created again", func() error {
		got, err := w.get(rec)
		if err != nil {
			return err
		}
		if now := got.Annotations[external.NameAnnotation]; now == id || len(p.Find(string(got.UID))) != 1 {
			return fmt.Errorf("annotation %s is %q, provider records %v", external.NameAnnotation, now, p.Find(string(got.UID)))
		}
		return nil
	}); err != nil {
		return err
	}
	w.say("    created again %s later", since(start))
	if _, err := w.provider(rec, "192.0.2.20", 5*time.Second); err != nil {
		return err
	}

	w.say("\n==> The provider rotates the token: the old one is refused (401) from now on")
	p.SetTokens("rotated-token")
	if err := w.condition(rec, status.Stalled, "Unauthorized", period*2+5*time.Second); err != nil {
		return err
	}
	w.say("\n==> Updating Secret dns-credentials with the new token")
	secret.Data[v1.TokenKey] = []byte("rotated-token")
	if err := c.Update(ctx, secret); err != nil {
		return err
	}
	start = time.Now()
	if err := w.condition(rec, status.Ready, "", 10*time.Second); err != nil {
		return err
	}
	w.say("    Ready %s after the Secret's update", since(start))

	w.say("\n==> The provider answers every request with 429 (Retry-After: 1), then with 5xx, then recovers; the value changes to 192.0.2.30")
	p.ResetStats()
	p.SetFaults(provider.Faults{TooManyRequests: 1, RetryAfter: time.Second})
	if err := w.patch(rec, func(r *v1.DNSRecord) { r.Spec.Value = "192.0.2.30" }); err != nil {
		return err
	}
	if err := w.until(10*time.Second, "a 429 answered", func() error { return w.atLeast(429, 429) }); err != nil {
		return err
	}
	p.SetFaults(provider.Faults{ServerError: 1})
	if err := w.until(10*time.Second, "a 5xx answered", func() error { return w.atLeast(500, 599) }); err != nil {
		return err
	}
	p.SetFaults(provider.Faults{})
	if _, err := w.provider(rec, "192.0.2.30", 60*time.Second); err != nil {
		return err
	}
	if err := w.condition(rec, status.Ready, "", 30*time.Second); err != nil {
		return err
	}
	w.say("    retried past %d answers 429 and %d 5xx, of %d requests", w.answered(429, 429), w.answered(500, 599), p.Stats().Total())

	w.say("\n==> Events of DNSRecord www")
	if err := w.events(rec, "Created", "Updated", "DriftCorrected"); err != nil {
		return err
	}

	w.say("\n==> Deleting DNSRecord www")
	got, err := w.get(rec)
	if err != nil {
		return err
	}
	if err := c.Delete(ctx, got); err != nil {
		return err
	}
	if err := w.until(30*time.Second, "the DNSRecord and its record gone", func() error {
		if _, err := w.get(rec); !apierrors.IsNotFound(err) {
			return fmt.Errorf("DNSRecord still there (%w)", err)
		}
		if left := p.Find(string(got.UID)); len(left) > 0 {
			return fmt.Errorf("provider still holds %v", left)
		}
		return nil
	}); err != nil {
		return err
	}
	w.say("    provider: no record tagged %s; DNSRecord gone", got.UID)

	w.say("\n==> The operator's calls to the provider (kopgo_external_requests_total)")
	w.metrics(controller)
	return nil
}

// walk is one walkthrough's state.
type walk struct {
	ctx context.Context //nolint:containedctx // a walk lives for one Walkthrough call, whose context it is
	c   client.Client
	p   *provider.Server
	out io.Writer
}

func (w *walk) say(format string, args ...any) { _, _ = fmt.Fprintf(w.out, format+"\n", args...) }

func since(t time.Time) string { return time.Since(t).Round(10 * time.Millisecond).String() }

func (w *walk) get(r *v1.DNSRecord) (*v1.DNSRecord, error) {
	got := &v1.DNSRecord{}
	return got, w.c.Get(w.ctx, client.ObjectKeyFromObject(r), got)
}

// until polls cond every 50 ms until it returns nil, or fails naming what
// was awaited.
func (w *walk) until(timeout time.Duration, what string, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %s: %w", what, timeout, err)
		}
		select {
		case <-w.ctx.Done():
			return w.ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// condition waits until r's condition typ is True (with reason, if not
// empty) and prints it.
func (w *walk) condition(r *v1.DNSRecord, typ, reason string, timeout time.Duration) error {
	var c *metav1.Condition
	err := w.until(timeout, fmt.Sprintf("%s=True %s", typ, reason), func() error {
		got, err := w.get(r)
		if err != nil {
			return err
		}
		c = status.Get(got, typ)
		if c == nil || c.Status != metav1.ConditionTrue || (reason != "" && c.Reason != reason) || (typ == status.Ready && !status.IsCurrent(got)) {
			return fmt.Errorf("%s is %v", typ, c)
		}
		return nil
	})
	if err == nil {
		msg := c.Reason
		if c.Message != "" {
			msg += ": " + c.Message
		}
		w.say("    cluster:  %s=True %s", typ, msg)
	}
	return err
}

// provider waits until the provider holds exactly one record for r with
// value, prints it, and returns its ID.
func (w *walk) provider(r *v1.DNSRecord, value string, timeout time.Duration) (string, error) {
	var held []provider.Record
	err := w.until(timeout, "the provider's record "+value, func() error {
		got, err := w.get(r)
		if err != nil {
			return err
		}
		held = w.p.Find(string(got.UID))
		if len(held) != 1 || held[0].Value != value || got.Annotations[external.NameAnnotation] != held[0].ID {
			return fmt.Errorf("provider holds %v, the DNSRecord records %q", held, got.Annotations[external.NameAnnotation])
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	h := held[0]
	w.say("    provider: %s %s.%s %s %s ttl %d (tag %s)", h.ID, h.Name, h.Zone, h.Type, h.Value, h.TTL, h.Tag)
	return h.ID, nil
}

func (w *walk) patch(r *v1.DNSRecord, f func(*v1.DNSRecord)) error {
	got, err := w.get(r)
	if err != nil {
		return err
	}
	before := got.DeepCopy()
	f(got)
	return w.c.Patch(w.ctx, got, client.MergeFrom(before))
}

// atLeast fails until the provider answered a request with a status in
// [lo, hi].
func (w *walk) atLeast(lo, hi int) error {
	if w.answered(lo, hi) == 0 {
		return fmt.Errorf("no answer %d-%d yet", lo, hi)
	}
	return nil
}

// answered counts the provider's answers with a status in [lo, hi].
func (w *walk) answered(lo, hi int) int {
	n := 0
	for _, byStatus := range w.p.Stats().Requests {
		for code, c := range byStatus {
			if code >= lo && code <= hi {
				n += c
			}
		}
	}
	return n
}

// events prints r's events and checks that each reason in want is among
// them.
func (w *walk) events(r *v1.DNSRecord, want ...string) error {
	return w.until(10*time.Second, "the events", func() error {
		list := &eventsv1.EventList{}
		if err := w.c.List(w.ctx, list, client.InNamespace(r.Namespace)); err != nil {
			return err
		}
		seen := map[string]bool{}
		var lines []string
		for _, e := range list.Items {
			if e.Regarding.Name != r.Name {
				continue
			}
			seen[e.Reason] = true
			lines = append(lines, fmt.Sprintf("    %-8s %-15s %s", e.Type, e.Reason, e.Note))
		}
		var missing []string
		for _, reason := range want {
			if !seen[reason] {
				missing = append(missing, reason)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("no %s event yet", strings.Join(missing, ", "))
		}
		slices.Sort(lines)
		w.say("%s", strings.Join(lines, "\n"))
		return nil
	})
}

// metrics prints controller's kopgo_external_requests_total series from
// controller-runtime's registry, where the operator's Builder counts.
func (w *walk) metrics(controller string) {
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		w.say("    (metrics unavailable: %v)", err)
		return
	}
	counts := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "kopgo_external_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["controller"] == controller {
				counts[labels["operation"]+" "+labels["outcome"]] += m.GetCounter().GetValue()
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		w.say("    %-28s %4.0f", k, counts[k])
	}
}

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/kopgo/kopgo/examples/dnsrecord/api/v1alpha1"
	"github.com/kopgo/kopgo/status"
)

// waitCondition waits until r's condition t has status s and reason, and
// returns when it was seen.
func waitCondition(t *testing.T, r *v1alpha1.DNSRecord, timeout time.Duration, typ, reason string) time.Time {
	t.Helper()
	eventually(t, timeout, fmt.Sprintf("%s %s=True %s", r.Name, typ, reason), func() error {
		got, err := get(t, r)
		if err != nil {
			return err
		}
		if c := status.Get(got, typ); c == nil || c.Status != "True" || (reason != "" && c.Reason != reason) {
			return fmt.Errorf("%s is %v", typ, c)
		}
		return nil
	})
	return time.Now()
}

// Credentials come from the Secret a DNSRecord names, under the operator's
// Run: a token the provider no longer accepts shows Stalled Unauthorized at
// the next check, and the Secret's update makes the record Ready at once;
// a Secret created after the DNSRecord that names it (Stalled
// SecretNotFound until then) is picked up the same way.
func TestCredentialsFromTheNamedSecret(t *testing.T) {
	const period = 2 * time.Second
	ns := cluster.Namespace(t)
	creds := secret(t, ns, "creds", token)
	sys := serveProvider(t)
	runOperator(t, "dns-secret", ns, sys.URL(), period)

	r := record(t, ns, "www", 1, "creds")
	waitCondition(t, r, 30*time.Second, status.Ready, "")
	sys.SetTokens("rotated")
	waitCondition(t, r, period*5/4+10*time.Second, status.Stalled, "Unauthorized")
	creds.Data[v1alpha1.TokenKey] = []byte("rotated")
	if err := cluster.Client().Update(t.Context(), creds); err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	recovered := waitCondition(t, r, 10*time.Second, status.Ready, "").Sub(changed)

	late := record(t, ns, "late", 2, "late")
	waitCondition(t, late, 30*time.Second, status.Stalled, "SecretNotFound")
	created := time.Now()
	secret(t, ns, "late", "rotated")
	pickedUp := waitCondition(t, late, 10*time.Second, status.Ready, "").Sub(created)
	t.Logf("Ready again %s after the Secret's update, %s after a late Secret's creation (polled every 50 ms)",
		recovered.Round(time.Millisecond), pickedUp.Round(time.Millisecond))
	if held := sys.Find(string(late.UID)); len(held) != 1 {
		t.Errorf("late record: %d provider records, want 1", len(held))
	}
}

package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/kopgo/kopgo/examples/dnsrecord/api/v1alpha1"
	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/test/testkit/fakesystem"
)

// killPoint is a step of a create at which the operator process is killed.
type killPoint int

const (
	// beforeCreate: the pending mark is on the object, the provider got
	// the create request and has not stored anything.
	beforeCreate killPoint = iota
	// afterStore: the provider stored the record, its answer is not sent.
	afterStore
	// afterAnswer: the answer is sent; the ID may or may not be recorded.
	afterAnswer
	// afterRecord: the ID is recorded; the first observe was answered.
	afterRecord
	killPoints
)

func (k killPoint) String() string {
	return [...]string{"before the provider stores the create", "after the provider stored it, before its answer",
		"after the answer, before or while the ID is recorded", "after the ID is recorded, at the first observe"}[k]
}

// killAt arms the kill of the operator at point at of the next create
// (and its start again); the channel is closed once it runs again. For
// beforeCreate it holds the create (a Hang fault), and killHeld kills.
func killAt(t *testing.T, sys *fakesystem.System, op *fakesystem.Operator, at killPoint) <-chan struct{} {
	t.Helper()
	isCreate := func(method, path string) bool { return method == http.MethodPost && path == "/v1/records" }
	switch at {
	case beforeCreate:
		if err := sys.Inject(fakesystem.Fault{Method: http.MethodPost, Path: "/v1/records", Times: 1, Hang: true}); err != nil {
			t.Fatal(err)
		}
		return nil
	case afterStore:
		return op.KillAt(sys, func(w fakesystem.Write) bool { return isCreate(w.Method, w.Path) })
	case afterAnswer:
		return op.KillAfter(sys, func(a fakesystem.Answered) bool {
			return isCreate(a.Method, a.Path) && a.Status == http.StatusCreated
		})
	default: // afterRecord: the first GET of the ID the create answered
		var (
			mu sync.Mutex
			id string
		)
		return op.KillAfter(sys, func(a fakesystem.Answered) bool {
			mu.Lock()
			defer mu.Unlock()
			if isCreate(a.Method, a.Path) && a.Status == http.StatusCreated && a.Resource != nil {
				id = a.Resource.ID
			}
			return id != "" && a.Method == http.MethodGet && a.Path == "/v1/records/"+id
		})
	}
}

// killHeld waits until the provider holds a create, then kills the
// operator and starts it again: the held call ends unserved.
func killHeld(t *testing.T, sys *fakesystem.System, op *fakesystem.Operator) {
	t.Helper()
	eventually(t, 60*time.Second, "a create held by the provider", func() error {
		for _, r := range sys.Pending() {
			if r.Method == http.MethodPost {
				return nil
			}
		}
		return fmt.Errorf("%d requests pending, no create", len(sys.Pending()))
	})
	op.Restart()
}

// The operator process is SIGKILLed 100 times, once during the create of
// each of 100 DNSRecords, at each step of the create in turn (25 times
// each), and started again each time: the provider ends with exactly one
// record per DNSRecord (no duplicate), and after the DNSRecords are
// deleted, with none (no leak).
func TestSIGKILLAtEachCreateStep(t *testing.T) {
	n := 100
	if testing.Short() {
		n = 20
	}
	ns := cluster.Namespace(t)
	secret(t, ns, "creds", token)
	sys := serveProvider(t)
	const period = time.Hour // no drift checks: only the creates matter here

	op := fakesystem.StartOperator(t, operatorCmd(ns, sys.URL(), period))
	kills := map[killPoint]int{}
	records := make([]*v1alpha1.DNSRecord, n)
	start := time.Now()
	for i := range n {
		at := killPoint(i % int(killPoints))
		killed := killAt(t, sys, op, at)
		records[i] = record(t, ns, fmt.Sprintf("r%03d", i), i, "creds")
		if killed == nil {
			killHeld(t, sys, op)
			kills[at]++
		} else {
			select {
			case <-killed:
				kills[at]++
			case <-time.After(60 * time.Second):
				t.Fatalf("record %d: the operator was not killed %s within 60 s", i, at)
			}
		}
		eventually(t, 60*time.Second, fmt.Sprintf("record %d (killed %s) Ready", i, at), func() error {
			got, err := get(t, records[i])
			if err != nil {
				return err
			}
			if !ready(got) {
				return fmt.Errorf("annotations %v, conditions %v", got.Annotations, got.Status.Conditions)
			}
			return nil
		})
	}
	t.Logf("%d kills (%v), %d starts, in %s", op.Kills(), kills, op.Starts(), time.Since(start).Round(time.Second))
	if op.Kills() != n {
		t.Errorf("operator killed %d times, want %d", op.Kills(), n)
	}

	duplicates := 0
	for i, r := range records {
		got, err := get(t, r)
		if err != nil {
			t.Fatal(err)
		}
		held := sys.Find(string(got.UID))
		if len(held) != 1 {
			duplicates += max(0, len(held)-1)
			t.Errorf("record %d (killed %s): %d provider records", i, killPoint(i%int(killPoints)), len(held))
			continue
		}
		if id := got.Annotations[external.NameAnnotation]; id != held[0].ID {
			t.Errorf("record %d records ID %q, the provider holds %q", i, id, held[0].ID)
		}
	}
	if total := len(sys.Resources()); total != n {
		t.Errorf("provider records: %d, want %d", total, n)
	}
	st := sys.Stats()
	t.Logf("provider: %d records for %d DNSRecords, %d duplicates; creates stored %d, %d POSTs, %d requests",
		len(sys.Resources()), n, duplicates, st.Created, st.ByMethod[http.MethodPost], st.Requests)

	for _, r := range records {
		if err := cluster.Client().Delete(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 60*time.Second, "every DNSRecord gone", func() error {
		list := &v1alpha1.DNSRecordList{}
		if err := cluster.Client().List(t.Context(), list); err != nil {
			return err
		}
		left := 0
		for _, r := range list.Items {
			if r.Namespace == ns {
				left++
			}
		}
		if left > 0 {
			return fmt.Errorf("%d left", left)
		}
		return nil
	})
	if left := sys.Resources(); len(left) != 0 {
		t.Errorf("leaked at the provider: %d records", len(left))
	}
}

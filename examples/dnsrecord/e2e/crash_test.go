package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kopgo/kopgo/examples/dnsrecord/api/v1alpha1"
	"github.com/kopgo/kopgo/examples/dnsrecord/provider"
	"github.com/kopgo/kopgo/external"
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
	// afterRecord: the ID is recorded; the first observe is under way.
	afterRecord
	killPoints
)

func (k killPoint) String() string {
	return [...]string{"before the provider stores the create", "after the provider stored it, before its answer",
		"after the answer, before or while the ID is recorded", "after the ID is recorded, at the first observe"}[k]
}

// killer sits in front of the provider and SIGKILLs the operator process
// at the armed point of the next create.
type killer struct {
	p    *provider.Server
	mu   sync.Mutex
	at   killPoint
	kill func() // nil: disarmed
	// created is the ID of the record whose first observe is awaited
	// (afterRecord).
	created string
}

func (k *killer) arm(at killPoint, kill func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.at, k.kill, k.created = at, kill, ""
}

// fire kills the process if armed at point at, once.
func (k *killer) fire(at killPoint) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.kill == nil || k.at != at {
		return false
	}
	k.kill()
	k.kill = nil
	return true
}

func (k *killer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	create := r.Method == http.MethodPost && r.URL.Path == "/v1/records"
	if create && k.fire(beforeCreate) {
		http.Error(w, "the client is gone", http.StatusServiceUnavailable)
		return
	}
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/records/") {
		k.mu.Lock()
		first := k.created != "" && strings.TrimPrefix(r.URL.Path, "/v1/records/") == k.created
		k.mu.Unlock()
		if first && k.fire(afterRecord) {
			http.Error(w, "the client is gone", http.StatusServiceUnavailable)
			return
		}
	}
	if !create {
		k.p.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	k.p.ServeHTTP(rec, r)
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if rec.Code == http.StatusCreated {
		var made provider.Record
		if err := json.Unmarshal(rec.Body.Bytes(), &made); err == nil {
			k.mu.Lock()
			k.created = made.ID
			k.mu.Unlock()
		}
		k.fire(afterAnswer)
	}
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
	p := provider.NewServer(provider.Options{Tokens: []string{token}})
	k := &killer{p: p}
	p.OnCreate(func(provider.Record) { k.fire(afterStore) })
	srv := httptest.NewServer(k)
	t.Cleanup(srv.Close)
	const period = time.Hour // no drift checks: only the creates matter here

	proc := startProcess(t, ns, srv.URL, period, "operator-0.log")
	kills := map[killPoint]int{}
	records := make([]*v1alpha1.DNSRecord, n)
	start := time.Now()
	for i := range n {
		at := killPoint(i % int(killPoints))
		killed := make(chan struct{})
		victim := proc
		k.arm(at, func() { victim.kill(); close(killed) })
		records[i] = record(t, ns, fmt.Sprintf("r%03d", i), i, "creds")
		select {
		case <-killed:
			kills[at]++
		case <-time.After(60 * time.Second):
			t.Fatalf("record %d: the operator was not killed %s within 60 s", i, at)
		}
		proc = startProcess(t, ns, srv.URL, period, fmt.Sprintf("operator-%d.log", i+1))
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
	t.Logf("%d kills (%v) and restarts in %s", n, kills, time.Since(start).Round(time.Second))

	tags := byTag(p)
	duplicates := 0
	for i, r := range records {
		got, err := get(t, r)
		if err != nil {
			t.Fatal(err)
		}
		held := tags[string(got.UID)]
		if len(held) != 1 {
			duplicates += max(0, len(held)-1)
			t.Errorf("record %d (killed %s): %d provider records", i, killPoint(i%int(killPoints)), len(held))
			continue
		}
		if id := got.Annotations[external.NameAnnotation]; id != held[0].ID {
			t.Errorf("record %d records ID %q, the provider holds %q", i, id, held[0].ID)
		}
	}
	if total := len(p.Records()); total != n {
		t.Errorf("provider records: %d, want %d", total, n)
	}
	t.Logf("provider: %d records for %d DNSRecords, %d duplicates; creates stored %d", len(p.Records()), n, duplicates, p.Stats().Creates)

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
	if left := p.Records(); len(left) != 0 {
		t.Errorf("leaked at the provider: %d records", len(left))
	}
}

package certs_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kopgo/kopgo/internal/certs"
	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	log.SetLogger(logr.Discard()) // repairs log on purpose; keep the output to the figures
	testkit.Main(m, testkit.Options{}, func(c *testkit.Cluster) { cluster = c })
}

const dnsName = "webhook.test.svc"

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// replica is one Authority with the bundle it last published and a TLS
// server that serves its certificate on loopback.
type replica struct {
	a    *certs.Authority
	addr string
	mu   sync.Mutex
	pub  []byte
}

func (r *replica) published() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pub
}

func newReplica(t *testing.T, opts certs.Options) *replica {
	t.Helper()
	r := &replica{}
	opts.OnBundle = func(_ context.Context, b []byte) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.pub = b
		return nil
	}
	a, err := certs.New(cluster.Client(), opts)
	if err != nil {
		t.Fatal(err)
	}
	r.a = a
	ln, err := tls.Listen("tcp", "127.0.0.1:0", a.TLSConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	r.addr = ln.Addr().String()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			_ = c.Close()
		}
	}()
	return r
}

// handshake connects to r trusting bundle at the clock's time and
// returns the certificate served.
func handshake(r *replica, bundle []byte, now func() time.Time) (*x509.Certificate, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(bundle)
	d := &net.Dialer{Timeout: 30 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", r.addr, &tls.Config{RootCAs: pool, ServerName: dnsName, Time: now, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Close() }()
	return c.ConnectionState().PeerCertificates[0], nil
}

func pemCount(b []byte) int {
	n := 0
	for {
		var blk *pem.Block
		if blk, b = pem.Decode(b); blk == nil {
			return n
		}
		n++
	}
}

func syncAll(t *testing.T, rs []*replica) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(rs))
	start := make(chan struct{})
	for i, r := range rs {
		wg.Go(func() {
			<-start
			errs[i] = r.a.Sync(t.Context())
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: Sync: %v", i, err)
		}
	}
}

func options(ns, name string, fc *clocktesting.FakeClock) certs.Options {
	return certs.Options{
		Secret:   types.NamespacedName{Namespace: ns, Name: name},
		DNSNames: []string{dnsName},
		Clock:    fc,
		// Short lifetimes, so that a test walks several rotations.
		CALifetime: 12 * time.Hour, LeafLifetime: time.Hour, TrustDelay: 10 * time.Minute,
	}
}

func TestReplicasStartingTogetherAgreeOnOneCA(t *testing.T) {
	ns := cluster.Namespace(t)
	const rounds, replicas = 10, 3
	conflicts := int64(0)
	for round := range rounds {
		fc := clocktesting.NewFakeClock(epoch)
		name := "ca-" + string(rune('a'+round))
		rs := make([]*replica, replicas)
		for i := range rs {
			rs[i] = newReplica(t, options(ns, name, fc))
		}
		syncAll(t, rs) // fails on any error surfaced
		created := int64(0)
		for i, r := range rs {
			s := r.a.Stats()
			created += s.CAsCreated
			conflicts += s.Conflicts
			if string(r.published()) != string(rs[0].published()) {
				t.Errorf("round %d: replica %d published another bundle than replica 0", round, i)
			}
		}
		if n := pemCount(rs[0].published()); created != 1 || n != 1 {
			t.Fatalf("round %d: %d CAs stored, %d in the bundle; want 1 and 1", round, created, n)
		}
		sec := &corev1.Secret{}
		if err := cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, sec); err != nil {
			t.Fatal(err)
		}
		if string(sec.Data[certs.FieldCACert]) != string(rs[0].published()) {
			t.Errorf("round %d: the Secret's CA is not the published one", round)
		}
		for i, r := range rs {
			if _, err := handshake(r, rs[0].published(), fc.Now); err != nil {
				t.Errorf("round %d: handshake with replica %d: %v", round, i, err)
			}
		}
	}
	t.Logf("%d rounds of %d replicas: 1 CA each, 0 errors surfaced, %d write races lost and resolved", rounds, replicas, conflicts)
}

// TestClientsConnectAcrossRotations steps a fake clock through 30 hours
// (30 leaf lifetimes, three CA rotations) in steps shorter than the trust
// delay. At every step the replicas sync one after another; after each
// Sync a client connects to every replica, synced or not yet, trusting
// the bundle the replica that just synced published (a webhook
// configuration updated by one replica while another still serves its
// older certificate), and after all of them trusting the bundle each
// replica published before the step (a webhook configuration not yet
// updated).
func TestClientsConnectAcrossRotations(t *testing.T) {
	ns := cluster.Namespace(t)
	fc := clocktesting.NewFakeClock(epoch)
	rs := make([]*replica, 3)
	for i := range rs {
		rs[i] = newReplica(t, options(ns, "ca", fc))
	}
	syncAll(t, rs)
	const step = 5 * time.Minute
	handshakes, failures := 0, 0
	leaves := map[string]bool{}
	cas := map[string]bool{}
	try := func(r *replica, bundle []byte, what string) {
		handshakes++
		cert, err := handshake(r, bundle, fc.Now)
		if err != nil {
			failures++
			t.Errorf("at +%s, %s: %v", fc.Now().Sub(epoch), what, err)
			return
		}
		leaves[cert.SerialNumber.String()] = true
		cas[string(cert.AuthorityKeyId)] = true
	}
	for range int(30 * time.Hour / step) {
		stale := make([][]byte, len(rs))
		for i, r := range rs {
			stale[i] = r.published()
		}
		fc.Step(step)
		for j, rj := range rs {
			if err := rj.a.Sync(t.Context()); err != nil {
				t.Fatalf("replica %d: Sync: %v", j, err)
			}
			for i, r := range rs {
				try(r, rj.published(), fmt.Sprintf("replica %d trusting replica %d's new bundle", i, j))
			}
		}
		for i, r := range rs {
			try(r, stale[i], fmt.Sprintf("replica %d trusting its bundle before the step", i))
		}
	}
	created := int64(0)
	for _, r := range rs {
		created += r.a.Stats().CAsCreated
	}
	t.Logf("%d handshakes, %d failed; %d serving certificates served, signed by %d CAs; %d CAs stored", handshakes, failures, len(leaves), len(cas), created)
	if len(cas) < 3 || len(leaves) < 3*30 {
		t.Errorf("the test walked too few rotations: %d CAs, %d leaves served", len(cas), len(leaves))
	}
	if created != int64(len(cas)) {
		t.Errorf("%d CAs stored, %d served: replicas disagreed", created, len(cas))
	}
}

func TestDeletedSecretIsRecreated(t *testing.T) {
	ns := cluster.Namespace(t)
	fc := clocktesting.NewFakeClock(epoch)
	r := newReplica(t, options(ns, "ca", fc))
	if err := r.a.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	first := r.published()
	sec := &corev1.Secret{}
	key := client.ObjectKey{Namespace: ns, Name: "ca"}
	if err := cluster.Client().Get(t.Context(), key, sec); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client().Delete(t.Context(), sec); err != nil {
		t.Fatal(err)
	}
	if err := r.a.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client().Get(t.Context(), key, sec); err != nil {
		t.Fatalf("Secret not recreated: %v", err)
	}
	s := r.a.Stats()
	if s.Repairs != 1 || s.Published != 2 || string(r.published()) == string(first) {
		t.Errorf("after deletion: %+v, bundle changed %v; want 1 repair, 2 bundles published", s, string(r.published()) != string(first))
	}
	if string(sec.Data[certs.FieldCACert]) != string(r.published()) {
		t.Errorf("the recreated Secret's CA is not the published one")
	}
	if _, err := handshake(r, r.published(), fc.Now); err != nil {
		t.Errorf("handshake trusting the new bundle: %v", err)
	}
}

func TestEditedSecretIsRepaired(t *testing.T) {
	ns := cluster.Namespace(t)
	fc := clocktesting.NewFakeClock(epoch)
	r := newReplica(t, options(ns, "ca", fc))
	if err := r.a.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{}
	key := client.ObjectKey{Namespace: ns, Name: "ca"}
	if err := cluster.Client().Get(t.Context(), key, sec); err != nil {
		t.Fatal(err)
	}
	sec.Data[certs.FieldCAKey] = []byte("not a key")
	if err := cluster.Client().Update(t.Context(), sec); err != nil {
		t.Fatal(err)
	}
	if err := r.a.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client().Get(t.Context(), key, sec); err != nil {
		t.Fatal(err)
	}
	if string(sec.Data[certs.FieldCACert]) != string(r.published()) || r.a.Stats().Repairs != 1 {
		t.Errorf("Secret not repaired: %+v", r.a.Stats())
	}
	if _, err := handshake(r, r.published(), fc.Now); err != nil {
		t.Errorf("handshake trusting the repaired bundle: %v", err)
	}
}

// TestStartFollowsTheClock runs Start with a fake clock: a serving
// certificate is renewed when the clock passes 2/3 of its lifetime, and
// not before.
func TestStartFollowsTheClock(t *testing.T) {
	ns := cluster.Namespace(t)
	fc := clocktesting.NewFakeClock(epoch)
	opts := options(ns, "ca", fc)
	opts.Resync = 9 * time.Minute // below the 10 min trust delay; the renewal is due at 40 min
	r := newReplica(t, opts)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.a.Start(ctx) }()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); {
			if time.Now().After(deadline) {
				t.Fatalf("gave up waiting for %s: %+v", what, r.a.Stats())
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitFor("the first Sync", func() bool { return r.a.Stats().Leaves == 1 && fc.HasWaiters() })
	fc.Step(39 * time.Minute) // 2/3 of a 1h leaf is 40 min
	waitFor("a timer at the renewal", fc.HasWaiters)
	if got := r.a.Stats().Leaves; got != 1 {
		t.Errorf("after 39 min: %d leaves signed, want 1", got)
	}
	fc.Step(time.Minute)
	waitFor("the renewal", func() bool { return r.a.Stats().Leaves == 2 })
	if _, err := handshake(r, r.published(), fc.Now); err != nil {
		t.Errorf("handshake: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start: %v", err)
	}
}

// TestNothingServedBeforeTheBundleIsPublished: while OnBundle fails, Sync
// returns its error and no certificate is served; once it succeeds, the
// certificate is served.
func TestNothingServedBeforeTheBundleIsPublished(t *testing.T) {
	ns := cluster.Namespace(t)
	fc := clocktesting.NewFakeClock(epoch)
	opts := options(ns, "ca", fc)
	calls, failing := 0, true
	opts.OnBundle = func(context.Context, []byte) error {
		calls++
		if failing {
			return errors.New("webhook configuration not writable")
		}
		return nil
	}
	a, err := certs.New(cluster.Client(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := a.Sync(t.Context()); err == nil || !strings.Contains(err.Error(), ns+"/ca") {
			t.Fatalf("Sync with OnBundle failing: %v, want an error naming the Secret", err)
		}
	}
	if _, err := a.GetCertificate(nil); err == nil {
		t.Fatalf("a certificate is served before its CA was published")
	}
	failing = false
	if err := a.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.GetCertificate(nil); err != nil {
		t.Fatal(err)
	}
	if s := a.Stats(); calls != 3 || s.Published != 1 || s.Leaves != 1 {
		t.Errorf("OnBundle called %d times, stats %+v; want 3 calls, 1 published, 1 leaf", calls, s)
	}
}

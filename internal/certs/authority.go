package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// maxAttempts bounds how often one Sync re-reads the Secret after losing
// a race to another replica.
const maxAttempts = 10

// ManagedByLabel marks the Secrets an Authority creates.
const ManagedByLabel = "app.kubernetes.io/managed-by"

// Authority keeps the CA in a Secret, signs serving certificates with it
// in memory and serves them through [Authority.GetCertificate]. Every
// replica of an operator runs one on the same Secret; they agree through
// the API server's conflict detection. Make one with [New].
type Authority struct {
	c    client.Client
	opts Options

	mu     sync.Mutex // serialises Sync
	leaf   atomic.Pointer[leaf]
	wake   time.Time // when Sync is due next (Start's timer)
	bundle atomic.Pointer[[]byte]

	stats struct {
		casCreated, conflicts, repairs, leaves, published, republished atomic.Int64
	}
}

// Stats counts what an Authority did since it was made.
type Stats struct {
	// CAsCreated counts the CAs this Authority made and stored (the
	// first, successors, replacements); a CA another replica stored
	// first is not counted.
	CAsCreated int64
	// Conflicts counts writes another replica won (409 or
	// AlreadyExists); each was resolved by reading the winner's Secret.
	Conflicts int64
	// Repairs counts Secrets found deleted or with an unusable field and
	// rewritten.
	Repairs int64
	// Leaves counts the serving certificates signed.
	Leaves int64
	// Published counts the bundles handed to OnBundle because they
	// changed.
	Published int64
	// Republished counts the unchanged bundles handed to OnBundle again
	// ([Options.Republish]).
	Republished int64
}

// New returns an Authority for opts, or an error naming each bad field
// of opts. c must read through the API server, not a cache (a manager's
// client reads Secrets from its cache; use client.New): replicas that
// start together must see each other's writes.
func New(c client.Client, opts Options) (*Authority, error) {
	if c == nil {
		return nil, errors.New("certs.New: client is nil")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("certs.New for CA Secret %s: %w", opts.Secret, err)
	}
	o.DNSNames = append([]string(nil), o.DNSNames...)
	return &Authority{c: c, opts: o}, nil
}

// Stats returns the counters.
func (a *Authority) Stats() Stats {
	return Stats{
		CAsCreated:  a.stats.casCreated.Load(),
		Conflicts:   a.stats.conflicts.Load(),
		Repairs:     a.stats.repairs.Load(),
		Leaves:      a.stats.leaves.Load(),
		Published:   a.stats.published.Load(),
		Republished: a.stats.republished.Load(),
	}
}

// Bundle returns the last trust bundle published (PEM), or nil before
// the first successful [Authority.Sync].
func (a *Authority) Bundle() []byte {
	if b := a.bundle.Load(); b != nil {
		return bytes.Clone(*b)
	}
	return nil
}

// GetCertificate returns the serving certificate, for
// tls.Config.GetCertificate. It fails before the first successful
// [Authority.Sync].
func (a *Authority) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if l := a.leaf.Load(); l != nil {
		return l.tls, nil
	}
	return nil, fmt.Errorf("CA Secret %s: no serving certificate yet", a.opts.Secret)
}

// TLSConfig returns a server configuration that serves the current
// certificate, picking up every rotation without a restart.
func (a *Authority) TLSConfig() *tls.Config {
	return &tls.Config{GetCertificate: a.GetCertificate, MinVersion: tls.VersionTLS12}
}

// Sync brings the Secret, the bundle and the serving certificate to what
// they must be now: it creates the CA if the Secret is missing, repairs
// a field someone broke, takes the rotation's next step when it is due,
// publishes the bundle if it changed, and then signs a new serving
// certificate if one is due. A race lost to another replica is resolved
// by reading the Secret again and is not an error.
func (a *Authority) Sync(ctx context.Context) error { return a.sync(ctx, false) }

// sync is Sync; with again, an unchanged bundle is handed to OnBundle too.
func (a *Authority) sync(ctx context.Context, again bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for range maxAttempts {
		st, retry, err := a.store(ctx)
		if err != nil {
			return err
		}
		if retry {
			continue
		}
		if err := a.publish(ctx, st.bundle(), again); err != nil {
			return err
		}
		now := a.opts.Clock.Now()
		l := a.leaf.Load()
		if a.opts.needsLeaf(l, st, now) {
			if l, err = st.current.sign(now, a.opts.leafNotAfter(st, now), a.opts.Backdate, a.opts.DNSNames); err != nil {
				return fmt.Errorf("CA Secret %s: %w", a.opts.Secret, err)
			}
			a.leaf.Store(l)
			a.stats.leaves.Add(1)
		}
		a.wake = a.opts.wakeAt(st, l, now)
		return nil
	}
	return fmt.Errorf("CA Secret %s: lost %d write races in a row", a.opts.Secret, maxAttempts)
}

// store reads the Secret, advances it and writes it if needed. retry
// reports a race lost: the caller reads again.
func (a *Authority) store(ctx context.Context) (st state, retry bool, err error) {
	logger := log.FromContext(ctx).WithValues("secret", klog.KRef(a.opts.Secret.Namespace, a.opts.Secret.Name))
	sec := &corev1.Secret{}
	err = a.c.Get(ctx, a.opts.Secret, sec)
	exists := err == nil
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return st, false, fmt.Errorf("read CA Secret %s: %w", a.opts.Secret, err)
	}
	repaired := false
	if exists {
		var errs []error
		st, errs = decode(sec)
		if len(errs) > 0 {
			logger.Error(errors.Join(errs...), "Repairing CA Secret")
			repaired = true
		}
	} else if a.bundle.Load() != nil {
		logger.Info("Recreating deleted CA Secret")
		repaired = true
	}
	now := a.opts.Clock.Now()
	st, changed, made, err := a.opts.advance(st, now)
	if err != nil {
		return st, false, fmt.Errorf("CA Secret %s: %w", a.opts.Secret, err)
	}
	if !changed && !repaired {
		return st, false, nil
	}
	if exists {
		sec.Data = encode(st)
		err = a.c.Update(ctx, sec) // the resourceVersion read is the precondition
	} else {
		sec = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: a.opts.Secret.Namespace, Name: a.opts.Secret.Name,
				Labels: map[string]string{ManagedByLabel: "kopgo"},
			},
			Type: corev1.SecretTypeOpaque,
			Data: encode(st),
		}
		err = a.c.Create(ctx, sec)
	}
	switch {
	case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err), exists && apierrors.IsNotFound(err):
		a.stats.conflicts.Add(1)
		logger.V(1).Info("Lost a CA Secret write race, reading again", "error", err.Error())
		return st, true, nil
	case err != nil:
		return st, false, fmt.Errorf("write CA Secret %s: %w", a.opts.Secret, err)
	}
	if repaired {
		a.stats.repairs.Add(1)
	}
	a.stats.casCreated.Add(int64(made))
	logger.V(1).Info("Wrote CA Secret", "next", st.next != nil, "previous", st.previous != nil)
	return st, false, nil
}

// publish hands bundle to OnBundle if it differs from the last one
// published, or, with again, if it is the same.
func (a *Authority) publish(ctx context.Context, bundle []byte, again bool) error {
	same := false
	if old := a.bundle.Load(); old != nil && bytes.Equal(*old, bundle) {
		if !again || a.opts.OnBundle == nil {
			return nil
		}
		same = true
	}
	if a.opts.OnBundle != nil {
		if err := a.opts.OnBundle(ctx, bytes.Clone(bundle)); err != nil {
			return fmt.Errorf("publish the trust bundle of CA Secret %s: %w", a.opts.Secret, err)
		}
	}
	if same {
		a.stats.republished.Add(1)
		return nil
	}
	a.bundle.Store(&bundle)
	a.stats.published.Add(1)
	return nil
}

// Start runs Sync until ctx ends: when a rotation step or a renewal is
// due, and every Resync to repair the Secret; a failed Sync is retried
// after Resync. It returns nil when ctx ends. Start makes an Authority a
// controller-runtime manager.Runnable.
func (a *Authority) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithValues("secret", klog.KRef(a.opts.Secret.Namespace, a.opts.Secret.Name))
	for {
		wait := a.opts.Resync
		if err := a.sync(ctx, a.opts.Republish); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			logger.Error(err, "Syncing webhook certificates failed")
		} else {
			a.mu.Lock()
			wait = a.wake.Sub(a.opts.Clock.Now())
			a.mu.Unlock()
		}
		t := a.opts.Clock.NewTimer(max(wait, 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
	}
}

// NeedLeaderElection is false: every replica serves webhooks, so every
// replica keeps its certificate.
func (a *Authority) NeedLeaderElection() bool { return false }

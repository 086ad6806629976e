package certs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Default lifetimes and timings, used where [Options] leaves a field zero.
const (
	// DefaultCALifetime is how long a CA is valid: one year.
	DefaultCALifetime = 365 * 24 * time.Hour
	// DefaultLeafLifetime is how long a serving certificate is valid: one week.
	DefaultLeafLifetime = 7 * 24 * time.Hour
	// DefaultRenewFraction is the part of a certificate's validity after
	// which it is replaced: 2/3.
	DefaultRenewFraction = 2.0 / 3.0
	// DefaultTrustDelay is how long a new CA is in the published bundle
	// before it signs: one hour.
	DefaultTrustDelay = time.Hour
	// DefaultResync is how often [Authority.Start] reads the Secret when no
	// rotation is due sooner: one minute.
	DefaultResync = time.Minute
)

// BundleFunc receives the PEM trust bundle (every CA a client must trust
// now, concatenated) each time it changes. A later step writes it into
// webhook configurations and CRD conversion settings. An error is
// returned by [Authority.Sync], and the bundle is offered again on the
// next Sync.
type BundleFunc func(ctx context.Context, bundle []byte) error

// Options configure an [Authority]. Secret and DNSNames are required.
type Options struct {
	// Secret is where the CA is kept, read and written through the API
	// server.
	Secret types.NamespacedName
	// DNSNames are the names in the serving certificate: the webhook
	// Service's, such as "svc.ns.svc" and "svc.ns.svc.cluster.local". A
	// name that is an IP address (a webhook reached by URL, such as
	// https://127.0.0.1:9443 in tests) goes into the IP SANs.
	DNSNames []string
	// CALifetime is a CA's validity; [DefaultCALifetime] if zero.
	CALifetime time.Duration
	// LeafLifetime is a serving certificate's validity;
	// [DefaultLeafLifetime] if zero.
	LeafLifetime time.Duration
	// RenewFraction in (0, 1) is the part of a certificate's validity
	// after which it is replaced; [DefaultRenewFraction] if zero.
	RenewFraction float64
	// TrustDelay is how long a new CA is in the bundle before any
	// certificate it signs is served: the time the bundle needs to reach
	// every client (written into webhook configurations and read by the
	// API server). [DefaultTrustDelay] if zero.
	TrustDelay time.Duration
	// Resync is how often [Authority.Start] reads the Secret, to repair
	// it when someone changed or deleted it, and to publish the bundle
	// another replica changed; shorter than TrustDelay. [DefaultResync]
	// if zero.
	Resync time.Duration
	// OnBundle, if set, receives the trust bundle when it changes, and
	// with Republish at every Resync as well.
	OnBundle BundleFunc
	// Republish hands the bundle to OnBundle at every Resync of
	// [Authority.Start] even when it did not change: for an OnBundle
	// that writes where someone else can change or delete it (a webhook
	// configuration deleted by hand, a CRD's spec.conversion reverted by
	// a later apply of its manifest), so that the damage lasts at most a
	// Resync. [Authority.Sync] alone publishes only a change.
	Republish bool
	// Clock drives every decision; the real clock if nil. Tests pass a
	// k8s.io/utils/clock/testing.FakeClock.
	Clock clock.WithTicker
	// CommonName of the CAs; "kopgo-webhook-ca" if empty.
	CommonName string
	// Backdate is how far before Clock's now a certificate's NotBefore
	// is set; [DefaultBackdate] if zero. Every replica on one Secret
	// must use the same. A test that drives Clock ahead of the real time
	// while real peers (the API server) check the certificates sets it
	// longer than that lead.
	Backdate time.Duration
}

// withDefaults fills zero fields and checks the result.
func (o Options) withDefaults() (Options, error) {
	if o.CALifetime == 0 {
		o.CALifetime = DefaultCALifetime
	}
	if o.LeafLifetime == 0 {
		o.LeafLifetime = DefaultLeafLifetime
	}
	if o.RenewFraction == 0 {
		o.RenewFraction = DefaultRenewFraction
	}
	if o.TrustDelay == 0 {
		o.TrustDelay = DefaultTrustDelay
	}
	if o.Resync == 0 {
		o.Resync = DefaultResync
	}
	if o.Backdate == 0 {
		o.Backdate = DefaultBackdate
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.CommonName == "" {
		o.CommonName = "kopgo-webhook-ca"
	}
	var errs []error
	if o.Secret.Name == "" || o.Secret.Namespace == "" {
		errs = append(errs, fmt.Errorf("Options.Secret: namespace and name are required, got %q", o.Secret.String()))
	}
	if len(o.DNSNames) == 0 {
		errs = append(errs, errors.New("Options.DNSNames: at least one name is required"))
	}
	for i, n := range o.DNSNames {
		if n == "" {
			errs = append(errs, fmt.Errorf("Options.DNSNames[%d]: empty name", i))
		}
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"CALifetime", o.CALifetime}, {"LeafLifetime", o.LeafLifetime}, {"TrustDelay", o.TrustDelay}, {"Resync", o.Resync}, {"Backdate", o.Backdate}} {
		if f.d < 0 {
			errs = append(errs, fmt.Errorf("negative duration in Options.%s: %s", f.name, f.d))
		}
	}
	if o.RenewFraction <= 0 || o.RenewFraction >= 1 {
		errs = append(errs, fmt.Errorf("Options.RenewFraction: %v is not in (0, 1)", o.RenewFraction))
	}
	// A replica that published a bundle read just before a successor was
	// stored publishes again within Resync; that must happen before the
	// successor signs.
	if len(errs) == 0 && o.Resync >= o.TrustDelay {
		errs = append(errs, fmt.Errorf("Options.Resync: %s is not shorter than TrustDelay %s: a replica could publish a bundle without the next CA after it signs", o.Resync, o.TrustDelay))
	}
	// A CA renewed at RenewFraction must stay valid while its successor
	// becomes trusted (TrustDelay) and the last leaves it signed expire
	// (LeafLifetime).
	if rest := time.Duration(float64(o.CALifetime) * (1 - o.RenewFraction)); len(errs) == 0 && o.TrustDelay+o.LeafLifetime >= rest {
		errs = append(errs, fmt.Errorf("Options.CALifetime: %s leaves %s after renewal, less than TrustDelay %s + LeafLifetime %s", o.CALifetime, rest, o.TrustDelay, o.LeafLifetime))
	}
	return o, errors.Join(errs...)
}

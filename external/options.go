package external

import (
	"fmt"
	"time"
)

// defaultCallTimeout is the deadline of one call to the external system
// unless [WithCallTimeout] says otherwise.
const defaultCallTimeout = 30 * time.Second

// Option configures a [Reconciler].
type Option func(*options)

type options struct {
	period      time.Duration
	callTimeout time.Duration
	perSecond   float64
	burst       int
	deletion    DeletionPolicy
	errs        []error
}

// WithPeriod sets how often each external resource is checked for drift
// (changed or deleted behind the operator's back): 5 minutes unless set.
// Each object is checked at its own offset within the period, from its
// UID, so that the checks of many objects are spread evenly. A period
// under one second is one second.
func WithPeriod(d time.Duration) Option {
	return func(o *options) { o.period = max(d, time.Second) }
}

// WithCallTimeout sets the deadline of each call to the external system
// (Observe, Create, Update, Delete, Find): 30 seconds unless set. A call
// past it fails as a koperrors.Timeout whose outcome is unknown (a create
// is then resolved as after a crash, see the package documentation); the
// object shows Reconciling, naming the call, and the worker is free for
// other objects even if the Client ignores its context. A d of zero or
// less is an error, reported by every reconcile.
func WithCallTimeout(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 {
			o.errs = append(o.errs, fmt.Errorf("external.WithCallTimeout(%s): must be positive", d))
			return
		}
		o.callTimeout = d
	}
}

// WithRateLimit limits the calls to each external system (see
// [SystemNamer]) to perSecond a second on average, with bursts of up to
// burst calls: in any second the system sees at most perSecond+burst
// calls from this Reconciler. A call waits for its turn in its reconcile
// (the worker waits with it; the reconcile's own deadline, if the Builder
// sets one, still holds), before its deadline ([WithCallTimeout]) starts.
// Unlimited unless set; perSecond must be positive and burst at least 1.
func WithRateLimit(perSecond float64, burst int) Option {
	return func(o *options) {
		if perSecond <= 0 || burst < 1 {
			o.errs = append(o.errs, fmt.Errorf("external.WithRateLimit(%g, %d): perSecond must be positive and burst at least 1", perSecond, burst))
			return
		}
		o.perSecond, o.burst = perSecond, burst
	}
}

// DeletionPolicy says what the deletion of an object does to its external
// resource.
type DeletionPolicy string

const (
	// Delete deletes the external resource with its object, and holds the
	// object until the system no longer has it. The default.
	Delete DeletionPolicy = "Delete"
	// Orphan leaves the external resource in place: the object goes at
	// once and nothing is called (an Orphaned event names the resource).
	Orphan DeletionPolicy = "Orphan"
)

// WithDeletionPolicy sets what deleting an object does to its external
// resource: [Delete] (the default) or [Orphan]. Any other value is an
// error, reported by every reconcile.
func WithDeletionPolicy(p DeletionPolicy) Option {
	return func(o *options) {
		if p != Delete && p != Orphan {
			o.errs = append(o.errs, fmt.Errorf("external.WithDeletionPolicy(%q): must be %q or %q", p, Delete, Orphan))
			return
		}
		o.deletion = p
	}
}

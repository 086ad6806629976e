package apply

import (
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/observability"
)

// ApplierOption configures an [Applier].
type ApplierOption func(*config)

type config struct {
	scheme     *runtime.Scheme
	cache      client.Reader
	maxRecords int
	metrics    *observability.Metrics
	controller string
}

// WithScheme sets the scheme that maps typed objects to kinds. Default:
// client-go's scheme.
func WithScheme(s *runtime.Scheme) ApplierOption { return func(c *config) { c.scheme = s } }

// WithCache gives the Applier a reader of live objects that costs no request
// (a manager's cache or cached client). With it, applying an intent that was
// already applied to an object nobody changed since sends nothing.
func WithCache(r client.Reader) ApplierOption { return func(c *config) { c.cache = r } }

// WithMetrics counts every apply's outcome (dry runs excepted) in kopgo_apply_total under the
// controller name.
func WithMetrics(m *observability.Metrics, controller string) ApplierOption {
	return func(c *config) { c.metrics, c.controller = m, controller }
}

// WithMaxRecords bounds how many objects the Applier remembers (default
// 10000); the least recently applied are forgotten first.
func WithMaxRecords(n int) ApplierOption { return func(c *config) { c.maxRecords = n } }

// Options are the per-call options.
type Options struct {
	// Force takes ownership of fields another manager owns instead of
	// failing with a conflict.
	Force bool
	// DryRun asks the server to validate and compute the result without
	// persisting it.
	DryRun bool
}

// Option is a per-call option: [Force] or [DryRun].
type Option interface {
	ApplyToOptions(*Options)
}

// Force takes ownership of conflicting fields.
type Force bool

// ApplyToOptions implements [Option].
func (f Force) ApplyToOptions(o *Options) { o.Force = bool(f) }

// DryRun sends the apply as a dry run: nothing is persisted and nothing is
// remembered.
type DryRun bool

// ApplyToOptions implements [Option].
func (d DryRun) ApplyToOptions(o *Options) { o.DryRun = bool(d) }

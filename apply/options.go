package apply

import (
	"net/http"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/observability"
)

// DefaultMaxRecords is how many objects an [Applier] remembers unless
// [WithMaxRecords] says otherwise.
const DefaultMaxRecords = 10000

// ApplierOption configures an [Applier] built by [New].
type ApplierOption func(*config)

type config struct {
	scheme     *runtime.Scheme
	cache      client.Reader
	httpClient *http.Client
	mapper     apimeta.RESTMapper
	maxRecords int
	metrics    *observability.Metrics
	controller string
}

// WithScheme sets the scheme that maps typed objects to kinds and decodes
// cached objects. Default: client-go's scheme (the built-in kinds).
func WithScheme(s *runtime.Scheme) ApplierOption { return func(c *config) { c.scheme = s } }

// WithCache gives the Applier a reader of live objects that costs no request:
// a manager's cache (mgr.GetCache()) or its cached client. With it, an apply
// that the cached object proves would change nothing sends nothing (see the
// package documentation; [KeepManagedFields] keeps the managedFields entry
// that proof needs after a restart). The reader should serve the kinds you
// apply from informers; a controller-runtime cache starts one on the first
// read of a kind.
func WithCache(r client.Reader) ApplierOption { return func(c *config) { c.cache = r } }

// WithHTTPClient makes the Applier send its requests through hc (a manager's
// mgr.GetHTTPClient()), sharing its connections. The Applier wraps hc's
// transport to see each response's status code; hc itself is not changed.
func WithHTTPClient(hc *http.Client) ApplierOption { return func(c *config) { c.httpClient = hc } }

// WithRESTMapper makes the Applier map kinds with m (a manager's
// mgr.GetRESTMapper()) instead of a discovery-backed mapper of its own.
func WithRESTMapper(m apimeta.RESTMapper) ApplierOption { return func(c *config) { c.mapper = m } }

// WithMetrics counts every apply's outcome (dry runs excepted) in
// kopgo_apply_total under the controller name.
func WithMetrics(m *observability.Metrics, controller string) ApplierOption {
	return func(c *config) { c.metrics, c.controller = m, controller }
}

// WithMaxRecords bounds how many objects the Applier remembers (default
// [DefaultMaxRecords]); the least recently applied are forgotten first. A
// forgotten object costs a check of the cached object the next time, or one
// apply request when that cannot prove it unchanged. Values below 1 mean 1.
func WithMaxRecords(n int) ApplierOption { return func(c *config) { c.maxRecords = n } }

// ApplyOptions are the options of one [Applier.Apply] call.
//
//nolint:revive // the name mirrors controller-runtime's client.ApplyOptions and its ApplyToApplyOptions method
type ApplyOptions struct {
	// FieldOwner is the field manager the apply is made as. Default: the
	// one given to [New]. It cannot be empty.
	FieldOwner string
	// Force takes ownership of fields another manager owns instead of
	// failing with a conflict.
	Force bool
	// DryRun asks the server to validate and compute the result without
	// persisting it. A dry run is always sent and never remembered.
	DryRun bool
}

// ApplyOption is an option of one [Applier.Apply] call: [FieldOwner],
// [Force] or [DryRun].
//
//nolint:revive // the name mirrors controller-runtime's client.ApplyOption
type ApplyOption interface {
	// ApplyToApplyOptions sets the option on o.
	ApplyToApplyOptions(o *ApplyOptions)
}

// ApplyOptions is itself an [ApplyOption]: its non-zero fields are set.
var _ ApplyOption = &ApplyOptions{}

// ApplyToApplyOptions implements [ApplyOption].
func (opts *ApplyOptions) ApplyToApplyOptions(o *ApplyOptions) {
	if opts.FieldOwner != "" {
		o.FieldOwner = opts.FieldOwner
	}
	if opts.Force {
		o.Force = true
	}
	if opts.DryRun {
		o.DryRun = true
	}
}

// FieldOwner applies as this field manager instead of the Applier's.
type FieldOwner string

// ApplyToApplyOptions implements [ApplyOption].
func (f FieldOwner) ApplyToApplyOptions(o *ApplyOptions) { o.FieldOwner = string(f) }

// Force is the Force option: Force(true) takes ownership of fields another manager owns (server-side
// apply's force=true) instead of failing with a conflict.
type Force bool

// ApplyToApplyOptions implements [ApplyOption].
func (f Force) ApplyToApplyOptions(o *ApplyOptions) { o.Force = bool(f) }

// DryRun is the DryRun option: DryRun(true) sends the apply as a dry run (dryRun=All): the server
// validates and answers with the result, and nothing is persisted or
// remembered.
type DryRun bool

// ApplyToApplyOptions implements [ApplyOption].
func (d DryRun) ApplyToApplyOptions(o *ApplyOptions) { o.DryRun = bool(d) }

package finalizers

import "sigs.k8s.io/controller-runtime/pkg/client"

// Options are the per-call options of [Add] and [Remove]. The zero value
// is the default.
type Options struct {
	// FieldOwner is the field manager the API server records for the
	// patch. Empty means the client's default (the program's user agent).
	FieldOwner string
}

// Option is one per-call option.
type Option interface {
	// ApplyToFinalizerOptions sets the option on o.
	ApplyToFinalizerOptions(o *Options)
}

// ApplyOptions applies opts to o in order and returns o, for callers that
// wrap this package and forward its options.
func (o *Options) ApplyOptions(opts []Option) *Options {
	for _, opt := range opts {
		if opt != nil {
			opt.ApplyToFinalizerOptions(o)
		}
	}
	return o
}

// FieldOwner names the field manager recorded for the patch, as
// client.FieldOwner does for controller-runtime's own calls: the entry the
// patch adds is then owned by that manager in managedFields.
type FieldOwner string

// ApplyToFinalizerOptions implements [Option].
func (f FieldOwner) ApplyToFinalizerOptions(o *Options) { o.FieldOwner = string(f) }

// compile-time check that client.Client and client.Writer are Clients.
var (
	_ Client = client.Client(nil)
	_ Client = client.Writer(nil)
)

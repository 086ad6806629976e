package watch

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// Options configure a watch.
type Options struct {
	// LabelSelector filters on the server: only matching objects are listed,
	// watched and cached. Nil means everything.
	LabelSelector labels.Selector
	// FieldSelector filters on the server, as the kind supports.
	FieldSelector fields.Selector
}

// Option configures a watch; [Labels], [MatchingLabels] and [Fields] are the
// options this package offers.
type Option interface {
	ApplyToWatchOptions(*Options)
}

// Labels selects objects by a label selector.
type Labels struct{ Selector labels.Selector }

// ApplyToWatchOptions implements [Option].
func (l Labels) ApplyToWatchOptions(o *Options) { o.LabelSelector = l.Selector }

// MatchingLabels selects objects that carry all these labels.
type MatchingLabels map[string]string

// ApplyToWatchOptions implements [Option].
func (m MatchingLabels) ApplyToWatchOptions(o *Options) {
	o.LabelSelector = labels.SelectorFromValidatedSet(labels.Set(m))
}

// Fields selects objects by a field selector, such as
// fields.OneTermEqualSelector("metadata.name", "web").
type Fields struct{ Selector fields.Selector }

// ApplyToWatchOptions implements [Option].
func (f Fields) ApplyToWatchOptions(o *Options) { o.FieldSelector = f.Selector }

func buildOptions(opts []Option) Options {
	var o Options
	for _, opt := range opts {
		opt.ApplyToWatchOptions(&o)
	}
	return o
}

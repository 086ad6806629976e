// Package calls carries, in a reconcile's context, where kopgo's helpers
// report the calls they make to systems outside the cluster (the external
// package's Observe, Create, Update, Delete and Find), so that they are
// counted under the reconciling controller's name. Nothing here is public
// API; a context without a recorder costs a helper one context lookup.
package calls

import (
	"context"
	"time"
)

// Recorder receives one finished call: its operation ("observe",
// "create", ...), its error (nil: success) and how long it took.
type Recorder func(operation string, err error, d time.Duration)

type key struct{}

// Into returns ctx carrying r.
func Into(ctx context.Context, r Recorder) context.Context {
	return context.WithValue(ctx, key{}, r)
}

// Record reports a call to ctx's recorder, if any.
func Record(ctx context.Context, operation string, err error, d time.Duration) {
	if r, ok := ctx.Value(key{}).(Recorder); ok && r != nil {
		r(operation, err, d)
	}
}

package gc

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/internal/telemetry"
	"github.com/kopgo/kopgo/observability"
)

// The options of [Collect], [Prune] and [Delete] are controller-runtime's
// delete options, passed as they are: client.PropagationPolicy (default
// Background), client.GracePeriodSeconds, client.Preconditions and
// client.DryRunAll. [OwnedFinalizers] and [Metrics] are kopgo's own, in the
// same interface; every option that is not one of them is handed to the
// API server's delete.

// OwnedFinalizers names the finalizers the caller owns, and may remove from
// objects stuck in deletion. Any other finalizer is left to its controller
// and the object is reported in [Result.Stuck].
type OwnedFinalizers []string

// ApplyToDelete implements client.DeleteOption; gc reads the value, the API
// server never sees it.
func (OwnedFinalizers) ApplyToDelete(*client.DeleteOptions) {}

// Metrics counts deletions in kopgo_gc_deletions_total under Controller (dry
// runs are not counted).
type Metrics struct {
	Metrics    *observability.Metrics
	Controller string
}

// ApplyToDelete implements client.DeleteOption; gc reads the value, the API
// server never sees it.
func (Metrics) ApplyToDelete(*client.DeleteOptions) {}

// options are the delete options sorted out: kopgo's own, and the rest for
// the server.
type options struct {
	server     client.DeleteOptions
	owned      []string
	metrics    *observability.Metrics
	controller string
}

func buildOptions(opts []client.DeleteOption) options {
	var o options
	for _, opt := range opts {
		switch opt := opt.(type) {
		case OwnedFinalizers:
			o.owned = append(o.owned, opt...)
		case Metrics:
			o.metrics, o.controller = opt.Metrics, opt.Controller
		case nil:
		default:
			opt.ApplyToDelete(&o.server)
		}
	}
	if o.server.PropagationPolicy == nil {
		bg := metav1.DeletePropagationBackground
		o.server.PropagationPolicy = &bg
	}
	return o
}

func (o options) dryRun() bool { return len(o.server.DryRun) > 0 }

// forObject is the server's options for deleting one object: a UID
// precondition when the object was read (its UID known), on top of any
// precondition the caller gave.
func (o options) forObject(obj *metav1.PartialObjectMetadata) *client.DeleteOptions {
	do := o.server
	if obj.UID != "" {
		pre := metav1.Preconditions{}
		if do.Preconditions != nil {
			pre = *do.Preconditions
		}
		uid := obj.UID
		pre.UID = &uid
		do.Preconditions = &pre
	}
	return &do
}

// everything is the selector Collect refuses: collecting every object of a
// kind by accident is the one mistake this package exists to prevent.
func isEverything(sel labels.Selector) bool { return sel == nil || sel.Empty() }

// finish ends a collection's span with what it did and records its
// deletions.
func (o options) finish(span trace.Span, res Result, err error) {
	span.SetAttributes(attribute.Int("kopgo.gc.deleted", len(res.Deleted)), attribute.Int("kopgo.gc.stuck", len(res.Stuck)))
	if o.metrics != nil && !o.dryRun() {
		o.metrics.RecordDeletions(o.controller, len(res.Deleted))
	}
	telemetry.EndSpan(span, "", err)
}

package gc

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kopgo/kopgo/internal/telemetry"
	"github.com/kopgo/kopgo/observability"
)

// Options configure [Collect], [Prune] and [Delete].
type Options struct {
	// OwnedFinalizers are the finalizers the caller owns. An object that is
	// already being deleted but waits on finalizers has only these removed;
	// any other finalizer is left to its controller and the object is
	// reported in [Result.Stuck].
	OwnedFinalizers []string
	// Propagation is the deletion propagation policy. Default Background:
	// the object goes at once and the garbage collector removes its
	// dependents.
	Propagation metav1.DeletionPropagation
	// DryRun reports what would be deleted without deleting anything.
	DryRun bool
	// Metrics, when set, counts deletions in kopgo_gc_deletions_total under
	// Controller.
	Metrics    *observability.Metrics
	Controller string
}

// Option configures a collection.
type Option interface {
	ApplyToGCOptions(*Options)
}

// OwnedFinalizers names the finalizers the caller may remove from objects
// stuck in deletion.
type OwnedFinalizers []string

// ApplyToGCOptions implements [Option].
func (f OwnedFinalizers) ApplyToGCOptions(o *Options) {
	o.OwnedFinalizers = append(o.OwnedFinalizers, f...)
}

// Propagation sets the deletion propagation policy.
type Propagation metav1.DeletionPropagation

// ApplyToGCOptions implements [Option].
func (p Propagation) ApplyToGCOptions(o *Options) { o.Propagation = metav1.DeletionPropagation(p) }

// DryRun reports without deleting.
type DryRun bool

// ApplyToGCOptions implements [Option].
func (d DryRun) ApplyToGCOptions(o *Options) { o.DryRun = bool(d) }

// Record counts deletions in kopgo_gc_deletions_total for a controller.
type Record struct {
	Metrics    *observability.Metrics
	Controller string
}

// ApplyToGCOptions implements [Option].
func (r Record) ApplyToGCOptions(o *Options) { o.Metrics, o.Controller = r.Metrics, r.Controller }

func buildOptions(opts []Option) Options {
	o := Options{Propagation: metav1.DeletePropagationBackground}
	for _, opt := range opts {
		opt.ApplyToGCOptions(&o)
	}
	return o
}

// everything is the selector Collect refuses: collecting every object of a
// kind by accident is the one mistake this package exists to prevent.
func isEverything(sel labels.Selector) bool { return sel == nil || sel.Empty() }

// finish ends a collection's span with what it did and records its
// deletions.
func (o Options) finish(span trace.Span, res Result, err error) {
	span.SetAttributes(attribute.Int("kopgo.gc.deleted", len(res.Deleted)), attribute.Int("kopgo.gc.stuck", len(res.Stuck)))
	if o.Metrics != nil && !o.DryRun {
		(*telemetry.Metrics)(o.Metrics).RecordDeletions(o.Controller, len(res.Deleted))
	}
	telemetry.EndSpan(span, "", err)
}

package reconciler

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kopgo/kopgo/apply"
	"github.com/kopgo/kopgo/observability"
)

// Reconciler brings one object of type T to its desired state. It receives
// the object as read from the cache (objects already gone never reach it)
// and the [Env] to act with. It returns nil when done, or an error with
// kopgo's markers: koperrors.Terminal (stop retrying, Stalled=True),
// koperrors.RequeueAfter (come back later, with or without an error). An
// optimistic-lock 409 Conflict is retried promptly and quietly at first
// (see the package documentation, section Results).
type Reconciler[T client.Object] interface {
	Reconcile(ctx context.Context, obj T, env *Env) error
}

// Func adapts a function to [Reconciler].
type Func[T client.Object] func(ctx context.Context, obj T, env *Env) error

// Reconcile implements [Reconciler].
func (f Func[T]) Reconcile(ctx context.Context, obj T, env *Env) error { return f(ctx, obj, env) }

// Finalizer is an optional hook a Reconciler implements to clean up when its
// object is deleted. The framework adds its finalizer before the first
// Reconcile, calls Cleanup once the object is being deleted, and removes only
// its own finalizer when Cleanup returns nil. A failing Cleanup is retried
// with backoff and reported in status and events.
type Finalizer[T client.Object] interface {
	Cleanup(ctx context.Context, obj T, env *Env) error
}

// ErrorPolicy is an optional hook that chooses when a failed reconcile is
// retried. Return 0 for controller-runtime's exponential backoff (the
// default without the hook). [FixedRequeue] is the common policy.
type ErrorPolicy[T client.Object] interface {
	RetryAfter(obj T, err error) time.Duration
}

// FixedRequeue is an ErrorPolicy that retries every failure after a fixed
// delay. Embed it in a reconciler:
//
//	type WebApp struct{ reconciler.FixedRequeue[*v1.WebApp] }
//	...
//	r := &WebApp{FixedRequeue: reconciler.FixedRequeue[*v1.WebApp]{After: 30 * time.Second}}
type FixedRequeue[T client.Object] struct {
	// After is the delay before a retry.
	After time.Duration
}

// RetryAfter implements [ErrorPolicy].
func (f FixedRequeue[T]) RetryAfter(T, error) time.Duration { return f.After }

// Env is what a Reconciler acts with, passed beside the object on every
// call (see the package documentation for why).
type Env struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Reader reads from the API server directly, for the rare read that must
	// not be stale.
	Reader client.Reader
	// Recorder emits events about objects; never nil.
	Recorder observability.Recorder
	// FieldOwner is the field manager name for server-side apply.
	FieldOwner string
	// Scheme maps Go types to kinds.
	Scheme *runtime.Scheme
	// Applier server-side applies children as FieldOwner, reading the
	// manager's cache so that an unchanged apply sends nothing. Nil in an Env
	// built by hand unless set.
	Applier *apply.Applier
}

// EnvFromManager returns the Env of a controller-runtime manager: its cached
// client, its API reader, its scheme, the given recorder (Nop if nil) and
// field owner, and an Applier for that field owner that shares the manager's
// cache, HTTP client and REST mapper. applyOpts are added to the Applier's
// options (apply.WithMetrics, for one). The error is of Kind Config (an empty
// field owner).
//
// The Applier reads the live object from the manager's cache to skip
// unchanged applies. For a kind the manager does not watch yet, that read
// starts a cluster-wide informer, which holds every object of the kind in
// memory and needs list and watch permission on it. kopgo's Builder avoids
// this by letting the Applier read only the kinds the controller watches
// (other kinds are applied without a read: one request each). With your own
// manager, either watch the kinds you apply, pass apply.WithCache with a
// reader of your choice, or set the manager's cache option
// ReaderFailOnMissingInformer, under which the Applier applies kinds it
// cannot read.
func EnvFromManager(mgr manager.Manager, fieldOwner string, recorder observability.Recorder, applyOpts ...apply.ApplierOption) (*Env, error) {
	if recorder == nil {
		recorder = observability.Nop{}
	}
	opts := append([]apply.ApplierOption{
		apply.WithScheme(mgr.GetScheme()), apply.WithCache(mgr.GetCache()),
		apply.WithHTTPClient(mgr.GetHTTPClient()), apply.WithRESTMapper(mgr.GetRESTMapper()),
	}, applyOpts...)
	applier, err := apply.New(mgr.GetConfig(), fieldOwner, opts...)
	if err != nil {
		return nil, err
	}
	return &Env{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Recorder: recorder,
		FieldOwner: fieldOwner, Scheme: mgr.GetScheme(), Applier: applier,
	}, nil
}

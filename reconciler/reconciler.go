package reconciler

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
// default without the hook). A fixed delay is one line:
//
//	func (WebApp) RetryAfter(*v1.WebApp, error) time.Duration { return 30 * time.Second }
type ErrorPolicy[T client.Object] interface {
	RetryAfter(obj T, err error) time.Duration
}

// Env is what a Reconciler acts with, passed beside the object on every
// call (see the package documentation for why). kopgo's controller Builder
// builds it from the manager. For [NewAdapter] with a manager of your own,
// fill it from the manager (client.WithFieldOwner(mgr.GetClient(), owner),
// GetAPIReader, GetScheme) and give it an Applier made with
// apply.New(mgr.GetConfig(), owner, apply.WithCluster(mgr)).
//
// The Applier reads the live object from its cache to skip unchanged
// applies. For a kind the manager does not watch yet, that read starts a
// cluster-wide informer, which holds every object of the kind in memory and
// needs list and watch permission on it. The Builder avoids this by letting
// the Applier read only the kinds the controller watches (other kinds are
// applied without a read: one request each). With your own manager, either
// watch the kinds you apply, give the Applier a cache reader of your
// choice, or set the manager's cache option ReaderFailOnMissingInformer,
// under which the Applier applies kinds it cannot read.
type Env struct {
	// Client reads from the manager's cache and writes to the API server
	// as the field owner: the Builder wraps the manager's client with
	// controller-runtime's client.WithFieldOwner, and a hand-built Env does
	// the same. Status writes and the framework's finalizer patches go
	// through it.
	Client client.Client
	// Reader reads from the API server directly, for the rare read that must
	// not be stale.
	Reader client.Reader
	// Recorder emits events about objects; never nil.
	Recorder observability.Recorder
	// Scheme maps Go types to kinds.
	Scheme *runtime.Scheme
	// Applier server-side applies children as the field owner, reading
	// the manager's cache so that an unchanged apply sends nothing: an
	// *apply.Applier (apply.New), or an *apply.Fake in unit tests. Nil in
	// an Env built by hand unless set.
	Applier apply.Interface
}

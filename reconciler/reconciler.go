package reconciler

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	"github.com/kopgo/kopgo/observability"
)

// Reconciler brings one object of type T to its desired state. It receives
// the object as read from the cache (objects already gone never reach it)
// and the [Env] to act with, and returns when to look again ([Action]:
// [Done], [RequeueAfter], [Requeue]) and what failed, if anything. The two
// are apart: an error is always a failure (koperrors.Terminal marks one
// that retrying cannot fix), and a requeue is never an error, so a
// schedule-driven reconciler (a CronJob, a certificate renewal) stays
// Ready between its runs. See the package documentation, section Results.
type Reconciler[T client.Object] interface {
	Reconcile(ctx context.Context, obj T, env *Env) (Action, error)
}

// Func adapts a function to [Reconciler].
type Func[T client.Object] func(ctx context.Context, obj T, env *Env) (Action, error)

// Reconcile implements [Reconciler].
func (f Func[T]) Reconcile(ctx context.Context, obj T, env *Env) (Action, error) {
	return f(ctx, obj, env)
}

// Finalizer is an optional hook a Reconciler implements to clean up what
// it made outside the object's owned children (an entry in an external
// system, a cloud resource) when the object is deleted. It is found on the
// Reconciler's method set, so a type that embeds another Reconciler (a
// *[Syncer]) and defines Cleanup gets it.
//
// The framework adds its finalizer before the first Reconcile, so that a
// crash right after Reconcile made something leaves it covered, and
// removes it again when that Reconcile ends in a terminal failure (an
// object whose spec is invalid from the start is deleted at once, without
// a Cleanup call). Once the object is being deleted, Cleanup runs instead
// of Reconcile: [Done] with a nil error means finished, and only the
// framework's own finalizer is removed; a requeue means not finished yet
// (look again then, nothing failed); a failure is retried with backoff and
// shown in Ready; a terminal failure shows Stalled=True naming the
// finalizer and how to let the object go (see the package documentation,
// section Cleanup on deletion). Once Cleanup reported done, it is not
// run again for the object; it may run again after a failure or a crash
// between its return and the finalizer's removal: make it idempotent.
type Finalizer[T client.Object] interface {
	Cleanup(ctx context.Context, obj T, env *Env) (Action, error)
}

// ErrorPolicy is an optional hook that chooses when a failed reconcile is
// retried. failures is how many reconciles of obj have failed in a row,
// this one included (1 on the first failure; a success resets it). Return
// 0 for the loop's exponential backoff (the default without the hook: 5
// ms doubling to 5 minutes, capped at 3 s while the failure is the API
// server being unreachable). A fixed delay is one line:
//
//	func (WebApp) RetryAfter(*v1.WebApp, error, int) time.Duration { return 30 * time.Second }
//
// and a backoff of one's own, for an external system with its own limits,
// two:
//
//	func (DNSRecord) RetryAfter(_ *v1.DNSRecord, _ error, failures int) time.Duration {
//		return min(time.Second<<min(failures-1, 10), 10*time.Minute)
//	}
//
// A delay the reconciler returned with the failure
// (return reconciler.RequeueAfter(d), err) wins over the policy; without
// one, the retry comes no sooner than the delay the error carries
// (koperrors.RetryAfterOf, a provider's Retry-After), whatever the policy
// returns. The hook is called all the same (with the same failures
// count), so a policy that counts or logs sees every failure; so it is for
// a terminal failure and an optimistic-lock conflict retried quietly,
// whose timing it does not change. It is not called for a reconcile cut short by shutdown.
type ErrorPolicy[T client.Object] interface {
	RetryAfter(obj T, err error, failures int) time.Duration
}

// Owner is an optional hook a Reconciler implements to declare the kinds
// of the children it creates and controls (one example object each, such
// as &appsv1.Deployment{}): kopgo's controller Builder then watches them as
// Owns does, so that a change to a child reconciles its parent, and indexes
// them by controller. [Syncer] implements it with its child kinds; a
// hand-written reconciler may too, instead of listing its kinds in main.
type Owner interface {
	ChildKinds() []client.Object
}

// Env is what a Reconciler acts with, passed beside the object on every
// call (see the package documentation for why). kopgo's controller Builder
// builds it from the manager, in Run and in Setup alike. A unit test builds
// one by hand: an apply.Fake as Applier, an observability.FakeRecorder,
// and a client of its choice.
//
// The Applier reads the live object from the manager's cache to skip
// unchanged applies, but only for the kinds the controller watches (the
// primary kind, Owns, Watch and an [Owner]'s child kinds): a read of any
// other kind would start a cluster-wide informer, holding every object of
// the kind in memory and needing list and watch permission on it, so other
// kinds are applied without a read (one request each).
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
	// CompleteKinds are the kinds of which Client's cache holds every
	// object, in every namespace the controller's children live in: no
	// label or field selector (cache.Options.ByObject,
	// DefaultLabelSelector, DefaultFieldSelector) and no namespace
	// restriction can leave one out. Only the cache's lag can. For these
	// kinds [Syncer] takes the cache's "not found" as the truth, and
	// creates a new child without reading the API server first; for any
	// other kind it reads the child's name live (one request), because an
	// object someone else made may be missing from a filtered cache
	// although it exists (see the package documentation, section "Sync:
	// objects it did not create"). The Builder's Run, which builds the
	// manager itself, sets the kinds it watches (but its own kind when
	// LabelSelector or WatcherConfig filter it); Setup and EnvFor, which
	// cannot see a manager's cache options, set none unless told
	// (controller.WithCompleteCache, Builder.CompleteCache). Naming a kind
	// whose cache is filtered lets Sync's apply overwrite the fields a
	// child sets on an object the filter hides (its controller reference
	// and owner label are removed again at once).
	CompleteKinds []schema.GroupKind
}

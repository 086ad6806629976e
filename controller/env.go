package controller

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
)

// EnvOption configures the Env that [EnvFor] builds.
type EnvOption func(*envOptions)

type envOptions struct {
	name     string
	recorder observability.Recorder
	metrics  *observability.Metrics
	cached   []client.Object
	complete []client.Object
}

// WithCachedKinds names the kinds the Env's Applier reads from the
// manager's cache, one example object each (&corev1.ConfigMap{}): the
// kinds the controller watches (its For, Owns and Watches). An apply of
// one of them that the cached object proves unchanged sends no request;
// any other kind is applied with one request and no read. Repeated
// options add up.
func WithCachedKinds(objs ...client.Object) EnvOption {
	return func(o *envOptions) { o.cached = append(o.cached, objs...) }
}

// WithCompleteCache declares that the manager's cache holds every object
// of these kinds (one example object each) in the namespaces the
// controller's children live in: no label, field or namespace restriction
// of the manager's cache options leaves one out. The Env lists them in
// reconciler.Env.CompleteKinds, so that a reconciler.Syncer creates a new
// child of such a kind without reading its name from the API server
// first, and its Applier reads them from the cache ([WithCachedKinds]).
// Without it, none: EnvFor cannot see the manager's cache options, and a
// Syncer reads each new child live (one request), which is safe with any
// cache. Naming a kind whose cache is filtered is not safe: see
// reconciler.Env.CompleteKinds. Repeated options add up.
func WithCompleteCache(objs ...client.Object) EnvOption {
	return func(o *envOptions) {
		o.complete = append(o.complete, objs...)
		o.cached = append(o.cached, objs...)
	}
}

// WithRecorder makes the Env record events with r instead of a new
// observability.EventRecorder (an observability.FakeRecorder in a test). A
// nil r keeps the default.
func WithRecorder(r observability.Recorder) EnvOption {
	return func(o *envOptions) { o.recorder = r }
}

// WithName names the controller in the controller label of
// kopgo_apply_total. Default: the field owner.
func WithName(name string) EnvOption {
	return func(o *envOptions) { o.name = name }
}

// WithMetrics counts the Applier's outcomes in m (observability.NewMetrics
// on a registry of your choice) instead of observability.Default, on
// controller-runtime's registry. A nil m keeps the default.
func WithMetrics(m *observability.Metrics) EnvOption {
	return func(o *envOptions) { o.metrics = m }
}

// EnvFor builds kopgo's helpers from mgr for a controller that writes as
// fieldOwner: the [reconciler.Env] that kopgo's own loop passes to a
// Reconciler, for a plain controller-runtime reconciler to keep. It is the
// one place an Env is built from a manager; the [Builder] calls it too.
// Call it in SetupWithManager, so that a kubebuilder project's main.go and
// suite_test.go, which construct the reconciler with only Client and
// Scheme, need no change:
//
//	func (r *CronJobReconciler) SetupWithManager(mgr ctrl.Manager) error {
//		env, err := kopcontroller.EnvFor(mgr, "cronjob-controller", kopcontroller.WithCachedKinds(&batchv1.Job{}))
//		if err != nil {
//			return err
//		}
//		r.env = env
//		return ctrl.NewControllerManagedBy(mgr).For(&v1.CronJob{}).Owns(&batchv1.Job{}).Named("cronjob").Complete(r)
//	}
//
// The Env holds:
//
//   - Client: the manager's client (reading the cache), writing as
//     fieldOwner (client.WithFieldOwner), so status.Patcher and the
//     finalizers package need no client.FieldOwner option;
//   - Reader: the manager's API reader, uncached;
//   - Recorder: an observability.EventRecorder reporting as fieldOwner
//     (the name the controller writes under, in managedFields and events
//     alike), added to mgr so that it flushes the counts of repeated events
//     when the manager stops ([WithRecorder] gives another);
//   - Scheme: the manager's;
//   - Applier: an apply.Applier for fieldOwner sharing the manager's HTTP
//     client, REST mapper and scheme (custom resources included), counting
//     its outcomes in kopgo_apply_total on controller-runtime's registry
//     ([WithMetrics] for another);
//   - CompleteKinds: the kinds named with [WithCompleteCache], none
//     without it.
//
// # Which kinds the Applier reads from the cache
//
// Only those named with [WithCachedKinds]; without it, none. Reading a
// kind from a controller-runtime cache starts an informer for it on the
// first read: cluster-wide unless the manager's cache is restricted, every
// object of the kind in memory, and list and watch permission needed. A
// controller that may only create and patch a kind would wait on that
// informer, which never syncs, for as long as the apply's context lasts (a
// plain reconciler's context has no deadline). The kinds a controller
// watches have their informers already, so reading them costs nothing:
// name them, and an unchanged child costs no request. The Builder names
// the kinds it watches (the reconciled kind, Owns, Watch, an Owner's child
// kinds) itself; EnvFor cannot see the watches of controller-runtime's
// builder, which come after it in SetupWithManager.
//
// Errors are of Kind Config: an empty field owner, a nil manager, a kind
// the manager's scheme does not know.
func EnvFor(mgr manager.Manager, fieldOwner string, opts ...EnvOption) (*reconciler.Env, error) {
	if mgr == nil {
		return nil, koperrors.Errorf(koperrors.Config, "kopgo env: the manager is nil")
	}
	if fieldOwner == "" {
		return nil, koperrors.Errorf(koperrors.Config, "kopgo env: a field owner is required")
	}
	o := envOptions{name: fieldOwner}
	for _, opt := range opts {
		opt(&o)
	}
	if o.name == "" {
		o.name = fieldOwner
	}
	cached, err := declaredKinds(mgr.GetScheme(), o.cached)
	if err != nil {
		return nil, err
	}
	complete, err := groupKinds(mgr.GetScheme(), o.complete)
	if err != nil {
		return nil, err
	}
	metrics := o.metrics
	if metrics == nil {
		if metrics, err = observability.Default(); err != nil {
			return nil, err
		}
	}
	// The Applier shares the manager's HTTP client, REST mapper and
	// scheme, and reads only the cached kinds from its cache (declaredOnly).
	applier, err := apply.New(mgr.GetConfig(), fieldOwner, apply.WithCluster(mgr), apply.WithMetrics(metrics, o.name),
		apply.WithCache(declaredOnly{Reader: mgr.GetCache(), scheme: mgr.GetScheme(), kinds: cached}))
	if err != nil {
		return nil, err
	}
	recorder := o.recorder
	if recorder == nil {
		// Writes through the manager's client; flushed when the manager
		// stops.
		r, err := observability.NewRecorder(mgr, fieldOwner)
		if err != nil {
			return nil, koperrors.WrapKind(koperrors.Config, err, fmt.Sprintf("controller %q: event recorder", o.name), kopmeta.ObjectRef{})
		}
		recorder = r
	}
	return &reconciler.Env{
		Client:   client.WithFieldOwner(mgr.GetClient(), fieldOwner),
		Reader:   mgr.GetAPIReader(),
		Recorder: recorder,
		Scheme:   mgr.GetScheme(),
		Applier:  applier,
		// Sync trusts the cache's "not found" for these kinds only.
		CompleteKinds: complete,
	}, nil
}

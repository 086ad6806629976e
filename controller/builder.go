package controller

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/loop"
	"github.com/kopgo/kopgo/internal/telemetry"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
)

// Builder wires a [reconciler.Reconciler] into a controller: watches,
// concurrency, timeouts, and, when it builds its own manager ([Builder.Run]),
// probes, metrics, leader election and graceful shutdown. Every method is
// optional; mistakes are recorded and returned by Run or Setup, never
// panicked.
type Builder[T client.Object] struct {
	name   string
	r      reconciler.Reconciler[T]
	errs   []error
	config *rest.Config
	scheme *runtime.Scheme

	healthPort, metricsPort int
	metricsOptions          func(*metricsserver.Options)
	gracefulShutdown        time.Duration
	leaderNamespace         string
	leaderName              string
	lease, renew, retry     time.Duration

	concurrency int
	ctrlOptions crcontroller.Options
	predicates  []predicate.Predicate // nil: the default ignoreStatusOnly
	owns        []client.Object
	watches     []watch
	refs        []reference[T]
	raw         []func(*builder.Builder)
	selector    labels.Selector
	watcher     *cache.ByObject
	complete    []client.Object // kinds the manager's cache holds all of (CompleteCache)
	fieldOwner  string
	recorder    observability.Recorder
	ownRecorder *observability.EventRecorder // made by setup when recorder is nil
	metrics     *observability.Metrics
	loop        loop.Options
	webhooks    *webhookConfig[T] // Webhooks; nil serves none
}

// defaultConcurrency is the default of [Builder.Concurrency] (why 4: see there).
const defaultConcurrency = 4

// defaultGracefulShutdown is controller-runtime's default window.
const defaultGracefulShutdown = 30 * time.Second

type watch struct {
	obj    client.Object
	mapper handler.MapFunc
}

// New starts a Builder for controller name running r on objects of type T.
// The name is also the default field owner (which events report as), the
// controller label of the metrics, and part of the default finalizer.
// controller-runtime refuses a second controller of the same name in one
// process unless the manager's options say
// config.Controller{SkipNameValidation: ptr.To(true)}: tests that start
// several managers give each controller its own name, or set it. A test
// that restarts an operator keeps its name (the field owner and the
// finalizer come from it) and passes
// ControllerOptions(controller.Options{SkipNameValidation: ptr.To(true)})
// to the Builder, since Run's manager is not yours to configure.
func New[T client.Object](name string, r reconciler.Reconciler[T]) *Builder[T] {
	b := &Builder[T]{name: name, r: r, fieldOwner: name, healthPort: -1, metricsPort: -1, concurrency: defaultConcurrency}
	if name == "" {
		b.errs = append(b.errs, fmt.Errorf("controller name is empty"))
	}
	if r == nil || (reflect.ValueOf(r).Kind() == reflect.Pointer && reflect.ValueOf(r).IsNil()) {
		b.errs = append(b.errs, fmt.Errorf("controller %q: reconciler is nil", name))
	}
	return b
}

// Config sets the REST config Run connects with. Default: the kubeconfig
// (KUBECONFIG, ~/.kube/config) or the in-cluster configuration.
func (b *Builder[T]) Config(cfg *rest.Config) *Builder[T] { b.config = cfg; return b }

// Scheme sets the scheme of Run's manager. Default: client-go's scheme.
func (b *Builder[T]) Scheme(s *runtime.Scheme) *Builder[T] { b.scheme = s; return b }

// HealthPort serves /healthz (liveness) and /readyz (readiness) on port.
// /readyz answers 503 until the caches synced and whenever the API server
// does not answer, 200 otherwise; standby replicas serve both too.
func (b *Builder[T]) HealthPort(port int) *Builder[T] { b.healthPort = port; return b }

// MetricsPort serves Prometheus /metrics (controller-runtime's and kopgo's
// series) on port, secure by default as kubebuilder's scaffold is: HTTPS
// (a self-signed certificate unless opts set CertDir), and every request
// authenticated (a bearer token, checked with a TokenReview) and authorized
// (a SubjectAccessReview of "get" on the non-resource URL /metrics) through
// the API server. An anonymous scrape gets 401, one without that
// permission 403. The operator then needs RBAC to create tokenreviews
// (authentication.k8s.io) and subjectaccessreviews (authorization.k8s.io),
// and the scraper a ClusterRole with nonResourceURLs ["/metrics"] and verb
// "get". opts adjust controller-runtime's metrics server options after
// these defaults; [InsecureMetrics] serves plain HTTP to anyone, for a
// port that only a trusted sidecar or a test reaches.
func (b *Builder[T]) MetricsPort(port int, opts ...func(*metricsserver.Options)) *Builder[T] {
	b.metricsPort = port
	for _, o := range opts {
		prev := b.metricsOptions
		b.metricsOptions = func(m *metricsserver.Options) {
			if prev != nil {
				prev(m)
			}
			o(m)
		}
	}
	return b
}

// InsecureMetrics is a [Builder.MetricsPort] option that turns the secure
// default off: plain HTTP, no authentication, no authorization. Anyone who
// reaches the port reads the metrics.
func InsecureMetrics(o *metricsserver.Options) {
	o.SecureServing = false
	o.FilterProvider = nil
}

// GracefulShutdown lets in-flight reconciles finish for up to d after the
// context ends (SIGTERM, Ctrl-C), then releases the leader lease. Default
// 30s. The reconciles' own contexts stay alive until the last 5 s of the
// window (or its second half, if it is shorter than 10 s), which remain to
// record their outcome; a reconcile cut short by then writes nothing into
// status and is redone by the next leader.
func (b *Builder[T]) GracefulShutdown(d time.Duration) *Builder[T] { b.gracefulShutdown = d; return b }

// LeaderElection runs only one active replica, holding the Lease
// namespace/name. Standby replicas serve probes and wait; when the leader
// stops (SIGTERM) it releases the lease after draining, so a standby takes
// over within a retry period (2 s by default) instead of a lease duration.
//
// The operator then needs, in namespace: get, create and update on
// leases (coordination.k8s.io), and create on core events (leader election
// records its transitions as events).
//
// A leader that cannot renew its lease within the renew deadline (10 s by
// default), as when the API server is unreachable for longer than that,
// must stop writing at once, since another replica may already lead: Run
// then returns the error "leader election lost" without draining, and the
// process should exit non-zero and be restarted (a Deployment's default
// restartPolicy Always does that). Outages shorter than the renew deadline
// only pause the work.
func (b *Builder[T]) LeaderElection(namespace, name string) *Builder[T] {
	b.leaderNamespace, b.leaderName = namespace, name
	return b
}

// LeaderElectionTimings sets the lease duration, renew deadline and retry
// period (controller-runtime's defaults: 15s, 10s, 2s).
func (b *Builder[T]) LeaderElectionTimings(lease, renew, retry time.Duration) *Builder[T] {
	b.lease, b.renew, b.retry = lease, renew, retry
	return b
}

// Concurrency reconciles up to n objects at once (never one object twice at
// once). Default 4: reconciles are mostly waiting on the API server, so one
// worker would let a single slow object delay every other, and 4 keeps a
// controller responsive without surprising a reconciler written with one
// object in mind. A reconciler that shares state across objects must guard
// it. With [Builder.ReconcileTimeout], a reconcile that ignores its context
// past its deadline frees its worker, so one hung object does not stop the
// others even at 1; without it (the default), a hung reconcile holds its
// worker.
func (b *Builder[T]) Concurrency(n int) *Builder[T] {
	if n < 1 {
		b.errs = append(b.errs, fmt.Errorf("controller %q: concurrency %d: must be at least 1", b.name, n))
	}
	b.concurrency = n
	return b
}

// ControllerOptions sets controller-runtime's controller options, for what
// the Builder has no method for (a rate limiter, a reconciliation timeout
// guardrail, a log constructor, priority queues). Fields left zero keep the
// Builder's choices: MaxConcurrentReconciles from [Builder.Concurrency],
// and RateLimiter from kopgo's loop, whose schedule the loop relies on for
// the delays a reconciler asks for and for a quick recovery after an
// API-server outage: replace it only knowing that. A NewQueue of your own
// is wrapped, not replaced: the loop keeps a handle on the queue to
// requeue Stalled objects.
func (b *Builder[T]) ControllerOptions(o crcontroller.Options) *Builder[T] {
	b.ctrlOptions = o
	return b
}

// Predicates replaces the filter on the primary object's events. By
// default updates that change only the object's status are dropped (see
// "What triggers a reconcile" in the package documentation); Predicates()
// with no argument drops that filter and reconciles on every event.
// [Builder.LabelSelector] still applies.
func (b *Builder[T]) Predicates(p ...predicate.Predicate) *Builder[T] {
	b.predicates = append(make([]predicate.Predicate, 0, len(p)), p...)
	return b
}

// ReconcileTimeout sets the deadline of one call to Reconcile or Cleanup
// (default: none). A reconcile past it fails with an error of Kind
// Timeout, which the status write after it still records (see
// [Builder.StatusTimeout]); a call that ignores its cancellation is left
// running one second later, its worker freed and its object not
// reconciled again until it returns. To be able to leave it, a call under
// a timeout runs on a goroutine of its own (a pool's, reused); without
// one, on controller-runtime's worker, which saves the handover (some 5 µs
// a reconcile).
func (b *Builder[T]) ReconcileTimeout(d time.Duration) *Builder[T] {
	if d < 0 {
		b.errs = append(b.errs, fmt.Errorf("controller %q: reconcile timeout %s: must not be negative", b.name, d))
	}
	b.loop.Timeout = d
	return b
}

// StatusTimeout sets the deadline of the status write that records a
// reconcile's outcome (default 5s). It starts when the reconcile returns,
// so even a reconcile that ran out of its own time gets its failure into
// status.
func (b *Builder[T]) StatusTimeout(d time.Duration) *Builder[T] { b.loop.StatusTimeout = d; return b }

// FinalizerName sets the finalizer of the reconciler's Cleanup hook
// (reconciler.Finalizer). Default "kopgo.dev/<controller name>".
func (b *Builder[T]) FinalizerName(name string) *Builder[T] { b.loop.FinalizerName = name; return b }

// StalledRetry sets how long a Stalled object (a terminal failure) waits
// before it is reconciled again although nothing changed (default 10
// minutes): a terminal verdict is a claim about the spec, and one made by
// mistake, such as a 422 from a server still starting, must not last
// forever. A requeue the reconciler returned with the failure wins.
func (b *Builder[T]) StalledRetry(d time.Duration) *Builder[T] {
	if d < 0 {
		b.errs = append(b.errs, fmt.Errorf("controller %q: stalled retry %s: must not be negative", b.name, d))
	}
	b.loop.StalledRetry = d
	return b
}

// TracerProvider traces every reconcile as a span (with child spans for
// applies, status writes, finalizers and gc) from tp. Default: no
// tracing, at no cost.
func (b *Builder[T]) TracerProvider(tp trace.TracerProvider) *Builder[T] {
	b.loop.Tracer = telemetry.Tracer(tp)
	return b
}

// Owns watches objects of obj's type and reconciles their controller owner.
func (b *Builder[T]) Owns(obj client.Object) *Builder[T] { b.owns = append(b.owns, obj); return b }

// Watch watches objects of obj's type and reconciles what mapper returns,
// such as owners.LabelMapper(label). Several watches compose.
func (b *Builder[T]) Watch(obj client.Object, mapper handler.MapFunc) *Builder[T] {
	if mapper == nil {
		b.errs = append(b.errs, fmt.Errorf("controller %q: watch of %T has a nil mapper", b.name, obj))
	}
	b.watches = append(b.watches, watch{obj: obj, mapper: mapper})
	return b
}

// WithWatches gives access to controller-runtime's builder for anything this
// Builder does not offer.
func (b *Builder[T]) WithWatches(f func(*builder.Builder)) *Builder[T] {
	b.raw = append(b.raw, f)
	return b
}

// LabelSelector limits the controller to objects whose labels match. With
// Run it filters in the cache (objects outside it are never listed or
// held); with Setup the manager's cache already exists, so it is a
// predicate on the primary watch. Either way the loop checks it again
// after reading the object, because other events enqueue objects outside
// it (an owned child's change maps to its parent whatever the parent's
// labels): such an object is not reconciled, unless it is being deleted
// with the controller's finalizer on (it left the selector after the
// controller took it on), whose cleanup still runs.
func (b *Builder[T]) LabelSelector(selector string) *Builder[T] {
	sel, err := labels.Parse(selector)
	if err != nil {
		b.errs = append(b.errs, fmt.Errorf("controller %q: label selector %q: %w", b.name, selector, err))
		return b
	}
	b.selector = sel
	return b
}

// WatcherConfig replaces the cache configuration of the primary watch
// (label and field selectors, namespaces, a transform that strips fields
// before caching), as koprs' watcher_config does. It needs Run: an existing
// manager's cache is configured when the manager is made, so Setup returns
// an error if it is set. LabelSelector, if also given, sets the label part.
func (b *Builder[T]) WatcherConfig(cfg cache.ByObject) *Builder[T] { b.watcher = &cfg; return b }

// CompleteCache declares that the manager's cache holds every object of
// these kinds (one example object each, such as &corev1.ConfigMap{}) in
// the namespaces the controller's children live in: no label or field
// selector and no namespace restriction in the manager's cache options
// (cache.Options.ByObject, DefaultLabelSelector, DefaultFieldSelector,
// DefaultNamespaces) leaves one out. A cache restricted to namespaces
// (DefaultNamespaces) is complete for children that live only in those
// namespaces, such as the children of parents it watches there, which
// share their parent's namespace. A reconciler.Syncer then creates a
// new child of such a kind with its apply alone, instead of reading the
// child's name from the API server first (reconciler.Env.CompleteKinds).
//
// It is for Setup: Run builds the manager itself, with no selector on any
// kind but the reconciled one (LabelSelector, WatcherConfig), and declares
// the kinds it watches complete without being told. Setup cannot see an
// existing manager's cache options, so without CompleteCache a Syncer
// keeps reading each new child live (one request each), which is safe
// with any cache. Declaring a kind whose cache is filtered is not: an
// object the filter hides would be overwritten by the child's apply (its
// controller reference and owner label are removed again at once).
func (b *Builder[T]) CompleteCache(objs ...client.Object) *Builder[T] {
	b.complete = append(b.complete, objs...)
	return b
}

// FieldOwner sets the field manager name (default: the controller name).
// With Run, the cache keeps only this manager's managedFields entry of every
// object (apply.KeepManagedFields): what the Applier needs to skip
// unchanged applies after a restart, and no one else's entries, which saves
// heap. A WatcherConfig transform replaces it for the primary kind.
func (b *Builder[T]) FieldOwner(name string) *Builder[T] { b.fieldOwner = name; return b }

// Metrics counts the controller's reconciles, applies and deletions in m
// (default: observability.Default(), on controller-runtime's registry,
// served at /metrics next to controller-runtime's own). Metrics made with
// observability.NewMetrics(reg) go to a registry of your choice.
func (b *Builder[T]) Metrics(m *observability.Metrics) *Builder[T] { b.metrics = m; return b }

// Recorder sets the event recorder (default: [observability.NewRecorder]
// with the field owner ([Builder.FieldOwner]) as reportingController,
// writing events.k8s.io/v1 events through the manager's client; a field
// owner that is not a qualified name is then a Config error, as the API
// server would refuse every event).
func (b *Builder[T]) Recorder(r observability.Recorder) *Builder[T] { b.recorder = r; return b }

func (b *Builder[T]) err() error {
	if b.healthPort > 0 && b.healthPort == b.metricsPort {
		b.errs = append(b.errs, fmt.Errorf("controller %q: health and metrics both on port %d", b.name, b.healthPort))
	}
	if len(b.errs) == 0 {
		return nil
	}
	return koperrors.WrapKind(koperrors.Config, errors.Join(b.errs...), "build controller", kopmeta.ObjectRef{})
}

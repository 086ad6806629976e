package controller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
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
	raw         []func(*builder.Builder)
	selector    labels.Selector
	watcher     *cache.ByObject
	fieldOwner  string
	recorder    observability.Recorder
	ownRecorder *observability.EventRecorder // made by setup when recorder is nil
	rOptions    []reconciler.Option
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
// it. A reconcile that ignores its context past its deadline
// (reconciler.WithTimeout) frees its worker, so one hung object does not
// stop the others even at 1.
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
// and RateLimiter from reconciler.NewAdapter, whose schedule the
// Adapter relies on for the delays a reconciler asks for and for a quick
// recovery after an API-server outage: replace it only knowing that.
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

// ReconcilerOptions passes options to the Adapter that runs the reconciler
// (reconciler.NewAdapter): a deadline for each reconcile
// (reconciler.WithTimeout; a short window after it remains to record the
// failure in status), tracing (reconciler.WithTracerProvider), the
// finalizer's name (reconciler.WithFinalizerName; default
// "kopgo.dev/<controller name>"). The drain window the Builder derives
// from [Builder.GracefulShutdown] is applied first, so these win.
func (b *Builder[T]) ReconcilerOptions(opts ...reconciler.Option) *Builder[T] {
	b.rOptions = append(b.rOptions, opts...)
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

// LabelSelector limits the primary watch to matching objects. With Run it
// filters in the cache (objects outside it are never listed or held); with
// Setup the manager's cache already exists, so it is a predicate.
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

// FieldOwner sets the field manager name (default: the controller name).
// With Run, the cache keeps only this manager's managedFields entry of every
// object (apply.KeepManagedFields): what the Applier needs to skip
// unchanged applies after a restart, and no one else's entries, which saves
// heap. A WatcherConfig transform replaces it for the primary kind.
func (b *Builder[T]) FieldOwner(name string) *Builder[T] { b.fieldOwner = name; return b }

// Recorder sets the event recorder (default: [observability.NewRecorder]
// with the controller name, writing events.k8s.io/v1 events through the
// manager's client).
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

// Setup adds the controller to an existing manager.
func (b *Builder[T]) Setup(mgr manager.Manager) error {
	return b.setup(mgr, false)
}

func (b *Builder[T]) setup(mgr manager.Manager, ownManager bool) error {
	if b.watcher != nil && !ownManager {
		b.errs = append(b.errs, fmt.Errorf("controller %q: WatcherConfig needs Run; configure the manager's cache yourself with Setup", b.name))
	}
	if err := b.err(); err != nil {
		return err
	}
	recorder := b.recorder
	if recorder == nil {
		// Writes through the manager's client; flushed when the manager
		// stops (and by Run once it has stopped).
		r, err := observability.NewRecorder(mgr, b.name)
		if err != nil {
			return koperrors.Wrap(err, "create event recorder", kopmeta.ObjectRef{})
		}
		recorder, b.ownRecorder = r, r
	}
	metrics, err := observability.Default()
	if err != nil {
		return err
	}
	owns, err := b.ownedKinds(mgr.GetScheme())
	if err != nil {
		return err
	}
	if ix, ok := b.r.(childIndexer); ok {
		if err := ix.IndexChildren(context.Background(), mgr.GetFieldIndexer()); err != nil {
			return err
		}
	}
	proto := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	declared, err := declaredKinds(mgr.GetScheme(), append(append([]client.Object{proto}, owns...), b.watchedKinds()...))
	if err != nil {
		return err
	}
	// The Applier reads only the kinds the controller watches from the
	// cache (see declaredOnly), shares the manager's HTTP client and REST
	// mapper, and counts its outcomes under the controller's name.
	applier, err := apply.New(mgr.GetConfig(), b.fieldOwner, apply.WithCluster(mgr),
		apply.WithMetrics(metrics, b.name), apply.WithCache(declaredOnly{Reader: mgr.GetCache(), scheme: mgr.GetScheme(), kinds: declared}))
	if err != nil {
		return err
	}
	env := &reconciler.Env{
		Client: client.WithFieldOwner(mgr.GetClient(), b.fieldOwner), Reader: mgr.GetAPIReader(), Recorder: recorder,
		Scheme: mgr.GetScheme(), Applier: applier,
	}
	var opts []reconciler.Option
	if grace := b.grace(ownManager); grace > 0 {
		opts = append(opts, reconciler.WithDrain(drainWindow(grace)))
	}
	adapter, limiter, err := reconciler.NewAdapter(b.name, env, b.r, append(opts, b.rOptions...)...)
	if err != nil {
		return err
	}
	var forOpts []builder.ForOption
	if b.selector != nil {
		sel := b.selector
		forOpts = append(forOpts, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return sel.Matches(labels.Set(o.GetLabels()))
		})))
	}
	if b.predicates == nil {
		forOpts = append(forOpts, builder.WithPredicates(ignoreStatusOnly()))
	} else if len(b.predicates) > 0 {
		forOpts = append(forOpts, builder.WithPredicates(b.predicates...))
	}
	copts := b.ctrlOptions
	if copts.MaxConcurrentReconciles == 0 {
		copts.MaxConcurrentReconciles = max(b.concurrency, 1)
	}
	if copts.RateLimiter == nil {
		copts.RateLimiter = limiter
	}
	bld := builder.ControllerManagedBy(mgr).Named(b.name).For(proto, forOpts...).WithOptions(copts)
	for _, o := range owns {
		bld = bld.Owns(o)
	}
	for _, w := range b.watches {
		bld = bld.Watches(w.obj, handler.EnqueueRequestsFromMapFunc(w.mapper))
	}
	for _, f := range b.raw {
		f(bld)
	}
	return bld.Complete(adapter)
}

// Run builds a manager (from Config, or the kubeconfig or in-cluster
// configuration), adds the controller and blocks until ctx ends and
// shutdown finishes.
func (b *Builder[T]) Run(ctx context.Context) error {
	if err := b.err(); err != nil {
		return err
	}
	cfg := b.config
	if cfg == nil {
		var err error
		if cfg, err = ctrl.GetConfig(); err != nil {
			return koperrors.WrapKind(koperrors.Config, err, "load kubeconfig", kopmeta.ObjectRef{})
		}
	}
	scheme := b.scheme
	if scheme == nil {
		scheme = clientgoscheme.Scheme
	}
	opts := manager.Options{
		Scheme: scheme,
		Metrics: metricsserver.Options{
			BindAddress: addr(b.metricsPort), SecureServing: true, FilterProvider: filters.WithAuthenticationAndAuthorization,
		},
		LeaderElection:                b.leaderName != "",
		LeaderElectionNamespace:       b.leaderNamespace,
		LeaderElectionID:              b.leaderName,
		LeaderElectionReleaseOnCancel: true,
	}
	if b.metricsOptions != nil {
		b.metricsOptions(&opts.Metrics)
	}
	grace := b.grace(true)
	opts.GracefulShutdownTimeout = &grace
	if b.lease > 0 {
		opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = &b.lease, &b.renew, &b.retry
	}
	if b.selector != nil || b.watcher != nil {
		var byObject cache.ByObject
		if b.watcher != nil {
			byObject = *b.watcher
		}
		if b.selector != nil {
			byObject.Label = b.selector
		}
		proto := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
		opts.Cache.ByObject = map[client.Object]cache.ByObject{proto: byObject}
	}
	// Cached objects keep only this controller's managedFields entry: what
	// the Applier needs to prove an apply unchanged after a restart (0
	// requests), and less heap than everyone's entries.
	opts.Cache.DefaultTransform = apply.KeepManagedFields(b.fieldOwner)
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		return koperrors.Wrap(err, "create manager", kopmeta.ObjectRef{})
	}
	if b.healthPort >= 0 {
		if err := mgr.Add(&probeServer{addr: addr(b.healthPort), ready: readiness(mgr)}); err != nil {
			return err
		}
	}
	if err := b.setup(mgr, true); err != nil {
		return err
	}
	err = mgr.Start(ctx)
	if b.ownRecorder != nil {
		// Events recorded while the reconciles drained: their counts too,
		// within 2 s, so that a slow API server cannot hold the exit.
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		b.ownRecorder.Shutdown(flushCtx)
		cancel()
	}
	return err
}

// probeServer serves /healthz and /readyz. It answers 503 Service
// Unavailable while not ready, as load balancers and Kubernetes expect (the
// manager's own probe server answers 500), and runs on standby replicas too.
type probeServer struct {
	addr  string
	ready func(*http.Request) error
}

// NeedLeaderElection reports false: a standby replica is alive and ready.
func (p *probeServer) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (p *probeServer) Start(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := p.ready(r); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return koperrors.WrapKind(koperrors.Config, err, "listen for probes on "+p.addr, kopmeta.ObjectRef{})
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}

// readiness is ready once the manager's caches synced, and while the API
// server answers (a controller cut off from it is not doing its job).
func readiness(mgr manager.Manager) func(*http.Request) error {
	hc, err := rest.HTTPClientFor(mgr.GetConfig())
	host := mgr.GetConfig().Host
	return func(req *http.Request) error {
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(req.Context(), 2*time.Second)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return fmt.Errorf("caches not synced")
		}
		r, rerr := http.NewRequestWithContext(ctx, http.MethodGet, host+"/readyz", nil)
		if rerr != nil {
			return rerr
		}
		resp, rerr := hc.Do(r)
		if rerr != nil {
			return fmt.Errorf("API server unreachable: %w", rerr)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("API server not ready: %s", resp.Status)
		}
		return nil
	}
}

// addr turns a port into a bind address: -1 is off ("0" to
// controller-runtime), 0 picks a free port.
func addr(port int) string {
	if port < 0 {
		return "0"
	}
	return net.JoinHostPort("", strconv.Itoa(port))
}

// grace is the graceful-shutdown window: as set, or controller-runtime's
// default when the Builder runs its own manager; 0 for an existing manager
// whose window the Builder cannot know.
func (b *Builder[T]) grace(ownManager bool) time.Duration {
	switch {
	case b.gracefulShutdown > 0:
		return b.gracefulShutdown
	case ownManager:
		return defaultGracefulShutdown
	}
	return 0
}

// drainWindow is how long in-flight reconciles keep their context within a
// graceful-shutdown window of grace: all but the last 5 s (or its second
// half, if shorter than 10 s), which remain for recording outcomes.
func drainWindow(grace time.Duration) time.Duration {
	if grace >= 10*time.Second {
		return grace - 5*time.Second
	}
	return grace / 2
}

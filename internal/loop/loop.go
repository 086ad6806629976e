package loop

import (
	"reflect"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/finalizers"
	"github.com/kopgo/kopgo/internal/calls"
	"github.com/kopgo/kopgo/internal/telemetry"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
)

// quietConflicts is how many optimistic-lock conflicts in a row an object
// may meet before the next one is treated as a failure: logged, counted as
// an error and shown in status. Until then a conflict is retried through
// the rate limiter (promptly: its backoff starts at a few milliseconds)
// without noise, since re-reading the newer object is the whole remedy.
const quietConflicts = 3

// Options are the loop's settings; the Builder fills them.
type Options struct {
	// Timeout is the deadline of one call to Reconcile or Cleanup; 0: none.
	Timeout time.Duration
	// Drain is how long a call in flight at shutdown may go on.
	Drain time.Duration
	// StatusTimeout is the deadline of the status write after a call.
	StatusTimeout time.Duration
	// FinalizerName is the finalizer of the Finalizer hook.
	FinalizerName string
	// StalledRetry overrides reconciler.StalledRetry, how long a Stalled
	// object (a terminal failure) waits before it is reconciled again
	// although nothing changed; 0 keeps it.
	StalledRetry time.Duration
	// Metrics records reconciles; nil: observability.Default().
	Metrics *observability.Metrics
	// Tracer traces reconciles; nil: no tracing.
	Tracer trace.Tracer
	// APIServer is the API server's host (rest.Config.Host): an error of
	// kind Unavailable or Timeout from a request to it backs off no longer
	// than [transientMax], while one from anywhere else (an external
	// system the reconciler calls) backs off exponentially. "": only
	// errors carrying a Kubernetes API status count as the API server's.
	APIServer string
	// EveryVersion makes every new resourceVersion of an object a change
	// its reconciler must see (see wake.go): set when the primary's event
	// filter is the user's, who may want status written by others seen.
	// Kinds without metadata.generation are judged so anyway.
	EveryVersion bool
	// Selector limits the controller to objects whose labels match; nil:
	// every object. An object outside it is not reconciled, whatever
	// event enqueued it (an owned child's, a watch's), unless it is being
	// deleted and carries the loop's finalizer: its cleanup is owed.
	Selector labels.Selector
}

// Loop runs one Reconciler for objects of type T.
type Loop[T client.Object] struct {
	name    string
	kind    string
	proto   T
	r       reconciler.Reconciler[T]
	cleanup reconciler.Finalizer[T] // nil: no finalizer
	policy  reconciler.ErrorPolicy[T]
	env     *reconciler.Env
	// client is the Env's client as given, for the loop's own writes;
	// env.Client logs the reconciler's writes to the object (clientlog.go).
	client client.Client
	// objs is what the loop keeps per object: what wakes it (wake.go),
	// its own writes (ownwrites.go), its failures in a row.
	objs *objects
	// echoes are the children's writes whose events have not come, of
	// the kinds in owned (set up before the controller starts, read-only
	// after).
	echoes  *echoes
	owned   map[schema.GroupKind]struct{}
	cleaned *uidSet // UIDs whose cleanup finished
	// calls records the reconciler's calls to external systems
	// (internal/calls) under this controller's name.
	calls   calls.Recorder
	o       Options
	limiter *rateLimiter
	workers *workers

	queueMu sync.Mutex
	queue   *wakeQueue
	// active counts the reconciles in flight (stop.go).
	active inflight

	mu        sync.Mutex
	abandoned map[reconcile.Request]chan struct{} // calls past their deadline that have not returned
	// finalized holds the UIDs this process added its finalizer to, and
	// lastState the last state of such objects deleted without a cleanup
	// having finished (see pending.go).
	finalized map[types.UID]struct{}
	lastState map[reconcile.Request]T
}

// New returns the loop that runs r for objects of type T under the
// controller name. Mistakes are errors of Kind Config.
func New[T client.Object](name string, env *reconciler.Env, r reconciler.Reconciler[T], o Options) (*Loop[T], error) {
	if r == nil {
		return nil, koperrors.Errorf(koperrors.Config, "controller %q: reconciler is nil", name)
	}
	if env == nil || env.Client == nil || env.Scheme == nil {
		return nil, koperrors.Errorf(koperrors.Config, "controller %q: env needs a client and a scheme", name)
	}
	// The one use of reflection: an empty T to copy for every reconcile.
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, koperrors.Errorf(koperrors.Config, "controller %q: T must be a pointer to a struct, such as *v1.WebApp", name)
	}
	p := reflect.New(t.Elem()).Interface().(T)
	if _, err := apiutil.GVKForObject(p, env.Scheme); err != nil {
		return nil, koperrors.WrapKind(koperrors.Config, err, "controller "+name, kopmeta.ObjectRef{})
	}
	if o.StatusTimeout <= 0 {
		o.StatusTimeout = 5 * time.Second
	}
	if o.FinalizerName == "" {
		o.FinalizerName = "kopgo.dev/" + name
	}
	if o.StalledRetry <= 0 {
		o.StalledRetry = reconciler.StalledRetry
	}
	if o.Tracer == nil {
		o.Tracer = telemetry.Tracer(nil)
	}
	if o.Metrics == nil {
		m, err := observability.Default()
		if err != nil {
			return nil, err
		}
		o.Metrics = m
	}
	if env.Recorder == nil {
		env.Recorder = nopRecorder{}
	}
	l := &Loop[T]{
		name: name, kind: kopmeta.RefOf(p).Kind, proto: p, r: r, o: o,
		client:    env.Client,
		cleaned:   newUIDSet(cleanedMemory),
		limiter:   newRateLimiter(),
		owned:     map[schema.GroupKind]struct{}{},
		abandoned: map[reconcile.Request]chan struct{}{},
		workers:   newWorkers(),
		finalized: map[types.UID]struct{}{},
		lastState: map[reconcile.Request]T{},
	}
	finalizer := ""
	if f, ok := r.(reconciler.Finalizer[T]); ok {
		if err := finalizers.Validate(o.FinalizerName); err != nil {
			return nil, koperrors.WrapKind(koperrors.Config, err, "controller "+name, kopmeta.ObjectRef{})
		}
		l.cleanup, finalizer = f, o.FinalizerName
	}
	l.objs = newObjects(finalizer, o.EveryVersion)
	l.echoes = newEchoes(func(req reconcile.Request) { l.wake(req) })
	l.calls = func(op string, err error, d time.Duration) { l.o.Metrics.RecordExternalCall(name, op, err, d) }
	// The reconciler's writes to its objects through env.Client are
	// logged (read your own writes, and what a reconcile acted on); the
	// Env stays the caller's, so that what it changes later
	// (CompleteKinds, say) holds for the loop too.
	env.Client = &loggingClient[T]{Client: env.Client, objs: l.objs}
	l.env = env
	l.policy, _ = r.(reconciler.ErrorPolicy[T])
	return l, nil
}

// ControllerOptions returns o with the loop's rate limiter (unless o has
// one) and a queue the loop keeps a handle on, to requeue what
// controller-runtime will not (see the package documentation).
func (l *Loop[T]) ControllerOptions(o crcontroller.Options) crcontroller.Options {
	if o.RateLimiter == nil {
		o.RateLimiter = l.limiter
	}
	newQueue := o.NewQueue
	usePriority := o.UsePriorityQueue == nil || *o.UsePriorityQueue
	o.NewQueue = func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		var q workqueue.TypedRateLimitingInterface[reconcile.Request]
		switch {
		case newQueue != nil:
			q = newQueue(name, rl)
		case usePriority:
			q = priorityqueue.New(name, func(po *priorityqueue.Opts[reconcile.Request]) { po.RateLimiter = rl })
		default:
			q = workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name})
		}
		w := newWakeQueue(q, rl, l.objs)
		l.queueMu.Lock()
		l.queue = w
		l.queueMu.Unlock()
		return w
	}
	return o
}

// requeueAfter adds req to the queue after d, for a requeue
// controller-runtime drops (one returned with a terminal error).
func (l *Loop[T]) requeueAfter(req reconcile.Request, d time.Duration) {
	if q := l.wakeQueue(); q != nil {
		q.AddAfter(req, d)
	}
}

// wake adds req to the queue with news.
func (l *Loop[T]) wake(req reconcile.Request) {
	if q := l.wakeQueue(); q != nil {
		q.Add(req)
	}
}

// wakeQueue is the controller's queue; nil before it starts.
func (l *Loop[T]) wakeQueue() *wakeQueue {
	l.queueMu.Lock()
	defer l.queueMu.Unlock()
	return l.queue
}

// countFailure counts failures in a row for req and returns the
// optimistic-lock conflicts in a row and the failures in a row, this one
// included (0, 0 when err is nil, which resets both).
func (l *Loop[T]) countFailure(req reconcile.Request, err error) (conflicts, failures int) {
	return l.objs.countFailure(req.NamespacedName, err != nil, koperrors.KindOf(err) == koperrors.Conflict)
}

// nopRecorder drops events: the recorder where none is given.
type nopRecorder struct{}

func (nopRecorder) Normal(_, _ runtime.Object, _, _, _ string)  {}
func (nopRecorder) Warning(_, _ runtime.Object, _, _, _ string) {}

// MarkNews makes the next wake-up of req run the reconciler, as an event
// of a related object does (see wake.go). The bench uses it to time a
// reconcile of a converged object that has something to look at.
func (l *Loop[T]) MarkNews(req reconcile.Request) { l.objs.markNews(req.NamespacedName) }

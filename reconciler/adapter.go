package reconciler

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/finalizers"
	"github.com/kopgo/kopgo/internal/telemetry"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/status"
)

// quietConflicts is how many optimistic-lock conflicts in a row an object
// may meet before the next one is treated as a failure: logged, counted as
// an error and shown in status. Until then a conflict is retried through
// the rate limiter (promptly: its backoff starts at a few milliseconds)
// without noise, since re-reading the newer object is the whole remedy.
const quietConflicts = 3

// adapter runs a [Reconciler] as a controller-runtime reconcile.Reconciler
// ([NewAdapter]).
type adapter[T client.Object] struct {
	name      string
	kind      string
	proto     T
	r         Reconciler[T]
	env       *Env
	o         options
	finalizer string
	limiter   *rateLimiter

	mu        sync.Mutex
	conflicts map[reconcile.Request]int           // optimistic-lock conflicts in a row
	abandoned map[reconcile.Request]chan struct{} // calls past their deadline that have not returned
}

// NewAdapter returns the Adapter that runs r for objects of type T under
// the controller name, as a controller-runtime reconcile.Reconciler: it
// reads the object, runs the finalizer protocol and r under a deadline with
// panics recovered, maintains kstatus conditions, and records metrics, a
// span and events (see the package documentation). Errors are of Kind
// Config.
//
// kopgo's controller.Builder calls it, in its own manager (Run) or in
// yours (Setup): the usual way. With controller-runtime's builder, the
// controller must use the returned rate limiter for the Adapter's outcomes
// to take effect:
//
//	adapter, limiter, err := reconciler.NewAdapter[*v1.WebApp]("webapp", env, &WebApp{})
//	...
//	err = ctrl.NewControllerManagedBy(mgr).For(&v1.WebApp{}).
//		WithOptions(controller.Options{RateLimiter: limiter}).
//		Complete(adapter)
//
// The limiter is controller-runtime's default schedule, per-object
// exponential backoff (5 ms doubling to 5 minutes) under an overall token
// bucket (10 per second, bursts of 100), except that
//   - a delay the reconciler asked for (koperrors.RequeueAfter(err, d), the
//     [ErrorPolicy] hook) is used as it is;
//   - an object whose last failure was the API server being unreachable or
//     slow (Kind Unavailable or Timeout) waits at most 3 s and bypasses the
//     bucket, so after an outage every object is tried again within
//     seconds of the server's return instead of after a backoff that grew
//     for the whole outage.
//
// Under another rate limiter the Adapter still returns every failure as an
// error, so that limiter's backoff applies instead.
//
// The Adapter is returned as the interface controller-runtime consumes
// (as its reconcile.AsReconciler does): it has nothing else to offer.
func NewAdapter[T client.Object](name string, env *Env, r Reconciler[T], opts ...Option) (reconcile.Reconciler, workqueue.TypedRateLimiter[reconcile.Request], error) {
	a, err := newAdapter(name, env, r, opts...)
	if err != nil {
		return nil, nil, err
	}
	return a, a.limiter, nil
}

func newAdapter[T client.Object](name string, env *Env, r Reconciler[T], opts ...Option) (*adapter[T], error) {
	if r == nil {
		return nil, koperrors.Errorf(koperrors.Config, "controller %q: reconciler is nil", name)
	}
	if env == nil || env.Client == nil || env.Scheme == nil {
		return nil, koperrors.Errorf(koperrors.Config, "controller %q: env needs a client and a scheme", name)
	}
	o := buildOptions(name, opts)
	// The one use of reflection: an empty T to copy for every reconcile.
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, koperrors.Errorf(koperrors.Config, "controller %q: T must be a pointer to a struct, such as *v1.WebApp", name)
	}
	p := reflect.New(t.Elem()).Interface().(T)
	if _, err := apiutil.GVKForObject(p, env.Scheme); err != nil {
		return nil, koperrors.WrapKind(koperrors.Config, err, "controller "+name, kopmeta.ObjectRef{})
	}
	var err error
	if env.Recorder == nil {
		env.Recorder = nopRecorder{}
	}
	if o.Metrics == nil {
		if o.Metrics, err = observability.Default(); err != nil {
			return nil, err
		}
	}
	a := &adapter[T]{
		name: name, kind: kopmeta.RefOf(p).Kind, proto: p, r: r, env: env, o: o,
		limiter:   newRateLimiter(),
		conflicts: map[reconcile.Request]int{},
		abandoned: map[reconcile.Request]chan struct{}{},
	}
	if usesFinalizer(r) {
		a.finalizer = o.FinalizerName
		if err := finalizers.Validate(a.finalizer); err != nil {
			return nil, koperrors.WrapKind(koperrors.Config, err, "controller "+name, kopmeta.ObjectRef{})
		}
	}
	return a, nil
}

// usesFinalizer reports whether r gets a finalizer: it implements
// [Finalizer], and, if it can say so (a [Syncer] without a finalize
// function cannot clean up), wants one.
func usesFinalizer[T client.Object](r Reconciler[T]) bool {
	if _, ok := r.(Finalizer[T]); !ok {
		return false
	}
	if c, ok := r.(interface{ usesFinalizer() bool }); ok {
		return c.usesFinalizer()
	}
	return true
}

// Reconcile implements reconcile.Reconciler.
//
// What controller-runtime receives agrees with what kopgo records: nil on
// success; a plain requeue as a requeue; a Terminal error (or a 422 from
// the API server) as a terminal error; every other failure, a conflict that
// persists, a timeout, a panic and a status write that failed included, as
// an error, so its metrics count it and its rate limiter backs off.
func (a *adapter[T]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	start := time.Now()
	if a.stillRunning(req) {
		// A call abandoned at its deadline still holds the object: never run
		// one object twice at once. Look again soon.
		log.FromContext(ctx).V(1).Info("Previous reconcile still running after its deadline; waiting for it")
		return reconcile.Result{RequeueAfter: abandonedPoll}, nil
	}
	obj := a.proto.DeepCopyObject().(T)
	if err := a.env.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil // gone: nothing to do
		}
		return reconcile.Result{}, koperrors.Wrap(err, "read", kopmeta.ObjectRef{Kind: kopmeta.RefOf(a.proto).Kind, Namespace: req.Namespace, Name: req.Name})
	}
	ctx, span := telemetry.StartReconcile(ctx, a.o.Tracer, a.name, a.kind, obj)

	// The user's work runs under a context that survives the controller's
	// shutdown for the drain window.
	uctx, release := drain(ctx, a.o.Drain)
	o := a.run(uctx, req, obj)
	release()
	if o.abandoned {
		// The user's goroutine may still change obj: record the outcome on
		// a fresh copy.
		obj = a.proto.DeepCopyObject().(T)
		if err := a.env.Client.Get(ctx, req.NamespacedName, obj); err != nil {
			o.skipStatus = true
		}
	}
	result, res, retErr := a.decide(ctx, req, obj, o.err)
	if result == telemetry.ResultTerminal {
		o.err = retErr // a 422 is marked terminal, for status too
	}

	if setter, ok := any(obj).(status.Setter); ok && !o.skipStatus && a.writesStatus(ctx, result, o.err) {
		// The user's deadline may have passed; keep a short window to
		// record the outcome.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.o.StatusTimeout)
		serr := a.updateStatus(wctx, setter, o, result)
		cancel()
		if serr != nil {
			// Status is never lost: the reconcile fails, and is retried with
			// backoff until the status is written.
			log.FromContext(ctx).Error(serr, "Writing status failed; will retry")
			if result == telemetry.ResultSuccess || result == telemetry.ResultRequeue {
				result, o.err = telemetry.ResultError, serr
				res, retErr = a.fail(req, obj, serr)
			}
		}
	}
	(*telemetry.Metrics)(a.o.Metrics).ObserveReconcile(ctx, a.name, result, o.err, time.Since(start))
	telemetry.EndSpan(span, result, o.err)
	return res, retErr
}

// writesStatus reports whether the outcome goes into status. A conflict
// retried quietly writes nothing (the next attempt will), and neither does
// a reconcile cut short by shutdown: the next leader redoes it, and a
// "context canceled" in Ready would be a lie about the object.
func (a *adapter[T]) writesStatus(ctx context.Context, result telemetry.Result, err error) bool {
	if result == telemetry.ResultConflict {
		return false
	}
	return err == nil || ctx.Err() == nil
}

// outcome is what running the user's code produced.
type outcome struct {
	err        error
	skipStatus bool               // gone, or being deleted with nothing of ours to do
	abandoned  bool               // the call ran past its deadline and was left running
	before     []metav1.Condition // the conditions as read, progress included
	patcher    *status.Patcher
}

// run performs the finalizer protocol and the user's Reconcile or Cleanup.
func (a *adapter[T]) run(ctx context.Context, req reconcile.Request, obj T) outcome {
	var o outcome
	deleting := kopmeta.IsBeingDeleted(obj)
	if deleting && (a.finalizer == "" || !finalizers.Has(obj, a.finalizer)) {
		// Nothing of ours to clean up, and nothing to say about an object
		// on its way out.
		o.skipStatus = true
		return o
	}
	if setter, ok := any(obj).(status.Setter); ok {
		o.patcher = status.NewPatcher(obj)
		o.before = slices.Clone(setter.GetConditions())
		takeProgress(setter)
	}
	if deleting {
		hook := a.r.(Finalizer[T])
		o.abandoned, o.err = a.call(ctx, req, func(ctx context.Context) error { return hook.Cleanup(ctx, obj, a.env) })
		if o.err != nil {
			return o
		}
		if _, err := finalizers.Remove(ctx, a.env.Client, obj, a.finalizer); err != nil {
			o.err = err
			return o
		}
		a.env.Recorder.Normal(obj, nil, "CleanedUp", "Finalize", "cleanup finished; finalizer "+a.finalizer+" removed")
		o.skipStatus = true // gone, or about to be
		return o
	}
	if a.finalizer != "" {
		if _, err := finalizers.Add(ctx, a.env.Client, obj, a.finalizer); err != nil {
			o.err = err
			return o
		}
	}
	o.abandoned, o.err = a.call(ctx, req, func(ctx context.Context) error { return a.r.Reconcile(ctx, obj, a.env) })
	return o
}

// decide maps the outcome to a metrics result, a controller-runtime result
// and the error controller-runtime should see.
func (a *adapter[T]) decide(ctx context.Context, req reconcile.Request, obj T, err error) (telemetry.Result, reconcile.Result, error) {
	logger := log.FromContext(ctx)
	conflicts := a.countConflict(req, err)
	var p *panicError
	var to *timeoutError
	switch {
	case err == nil:
		return telemetry.ResultSuccess, reconcile.Result{}, nil
	case ctx.Err() != nil:
		// Cut short by shutdown: the queue is closed, so this is for the
		// record only.
		logger.Info("Reconcile cut short by shutdown", "error", err.Error())
		return telemetry.ResultError, reconcile.Result{}, err
	case errors.As(err, &p):
		res, rerr := a.fail(req, obj, err)
		return telemetry.ResultPanic, res, rerr
	case errors.As(err, &to):
		a.env.Recorder.Warning(obj, nil, "Timeout", "Reconcile", err.Error())
		res, rerr := a.fail(req, obj, err)
		return telemetry.ResultTimeout, res, rerr
	case !koperrors.Failed(err):
		d, _ := koperrors.RequeueAfterOf(err)
		if d <= 0 {
			// "As soon as the rate limiter allows": RequeueAfter(0) would
			// mean no requeue at all.
			return telemetry.ResultRequeue, reconcile.Result{Requeue: true}, nil //nolint:staticcheck // the one way to requeue through the rate limiter without an error
		}
		return telemetry.ResultRequeue, reconcile.Result{RequeueAfter: d}, nil
	case koperrors.IsTerminal(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		// A 422 or 400 from the API server is a problem of the parent's
		// spec (a child it asked for is invalid, or cannot even be encoded,
		// such as a value with control characters): retrying the same
		// request cannot help until the parent changes.
		logger.Error(err, "Reconcile failed terminally; waiting for a change")
		a.env.Recorder.Warning(obj, nil, koperrors.KindOf(err).String(), "Reconcile", err.Error())
		return telemetry.ResultTerminal, reconcile.Result{}, terminal(err)
	case koperrors.KindOf(err) == koperrors.Conflict && conflicts <= quietConflicts:
		logger.V(1).Info("Conflict, retrying", "error", err.Error(), "conflicts", conflicts)
		return telemetry.ResultConflict, reconcile.Result{Requeue: true}, nil //nolint:staticcheck // the one way to requeue through the rate limiter without an error
	}
	a.env.Recorder.Warning(obj, nil, koperrors.KindOf(err).String(), "Reconcile", err.Error())
	res, rerr := a.fail(req, obj, err)
	return telemetry.ResultError, res, rerr
}

// fail returns a failure to controller-runtime: as an error, so that its
// metrics count it and the rate limiter backs off, with the delay the
// reconciler or its ErrorPolicy asked for handed to the rate limiter.
func (a *adapter[T]) fail(req reconcile.Request, obj T, err error) (reconcile.Result, error) {
	d, ok := koperrors.RequeueAfterOf(err)
	if p, has := a.r.(ErrorPolicy[T]); has && !ok {
		if pd := p.RetryAfter(obj, err); pd > 0 {
			d, ok = pd, true
		}
	}
	kind := koperrors.KindOf(err)
	a.limiter.failed(req, ok, d, kind == koperrors.Unavailable || kind == koperrors.Timeout)
	return reconcile.Result{}, err
}

// terminal makes err controller-runtime's terminal error too.
func terminal(err error) error {
	if koperrors.IsTerminal(err) {
		return err
	}
	return koperrors.Terminal(err)
}

// countConflict counts optimistic-lock conflicts in a row for req and
// returns the count (0 when err is not one, which resets it).
func (a *adapter[T]) countConflict(req reconcile.Request, err error) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if koperrors.KindOf(err) != koperrors.Conflict {
		delete(a.conflicts, req)
		return 0
	}
	a.conflicts[req]++
	return a.conflicts[req]
}

// updateStatus maintains Ready/Reconciling/Stalled and observedGeneration
// and writes status only if it changed.
//
// Reconciling and Stalled describe one reconcile, so the reconciler runs
// without them (takeProgress): if it sets either, it is reporting progress
// itself and its conditions stand. Otherwise a success leaves a True Ready
// as it is (the reconciler's reason and message included) and turns any
// other Ready into Ready=True, a plain requeue reports Reconciling, and a
// failure records the error. Comparing conditions before and after alone
// cannot tell "set again to the same value" from "left alone". A condition
// whose status did not move keeps its lastTransitionTime, whatever
// happened to it during the reconcile.
func (a *adapter[T]) updateStatus(ctx context.Context, obj status.Setter, o outcome, result telemetry.Result) error {
	if o.patcher == nil || o.abandoned {
		// A fresh copy: nothing the user did to it.
		o.patcher = status.NewPatcher(obj)
		o.before = slices.Clone(obj.GetConditions())
		takeProgress(obj)
	}
	userProgress := status.Get(obj, status.Reconciling) != nil || status.Get(obj, status.Stalled) != nil
	userTouched := userProgress || !sameConditions(withoutProgress(o.before), obj.GetConditions())
	switch result {
	case telemetry.ResultSuccess:
		if !userTouched && !status.IsTrue(obj, status.Ready) {
			status.MarkReady(obj, status.ReasonSucceeded, "")
		}
		status.SetObservedGeneration(obj)
	case telemetry.ResultRequeue:
		if !userTouched {
			status.SetError(obj, o.err)
		}
	default:
		status.SetError(obj, o.err)
	}
	keepTransitionTimes(obj, o.before)
	_, err := o.patcher.Patch(ctx, a.env.Client, obj)
	return err
}

// sameConditions compares conditions by type, status, reason and message.
func sameConditions(a, b []metav1.Condition) bool {
	return slices.EqualFunc(a, b, func(x, y metav1.Condition) bool {
		return x.Type == y.Type && x.Status == y.Status && x.Reason == y.Reason && x.Message == y.Message
	})
}

// takeProgress removes Reconciling and Stalled from obj.
func takeProgress(obj status.Setter) {
	if slices.ContainsFunc(obj.GetConditions(), isProgress) {
		obj.SetConditions(withoutProgress(obj.GetConditions()))
	}
}

func withoutProgress(conds []metav1.Condition) []metav1.Condition {
	return slices.DeleteFunc(slices.Clone(conds), isProgress)
}

func isProgress(c metav1.Condition) bool {
	return c.Type == status.Reconciling || c.Type == status.Stalled
}

// keepTransitionTimes gives each condition of obj that has the same type and
// status as one in old that one's lastTransitionTime: a condition removed
// and set again, or moved through another status and back within one
// reconcile, did not transition.
func keepTransitionTimes(obj status.Setter, old []metav1.Condition) {
	conds := obj.GetConditions()
	for i := range conds {
		for _, o := range old {
			if o.Type == conds[i].Type && o.Status == conds[i].Status {
				conds[i].LastTransitionTime = o.LastTransitionTime
			}
		}
	}
}

// panicError is a recovered panic in user code.
type panicError struct{ value any }

func (p *panicError) Error() string { return fmt.Sprintf("reconciler panicked: %v", p.value) }

// timeoutError says the reconcile ran past its deadline.
type timeoutError struct {
	after     time.Duration
	cause     error
	abandoned bool
}

func (t *timeoutError) Error() string {
	switch {
	case t.abandoned:
		return fmt.Sprintf("reconcile did not finish within %s and ignored its cancellation; it is left running and the object is retried once it returns", t.after)
	case t.cause != nil:
		return fmt.Sprintf("reconcile did not finish within %s: %v", t.after, t.cause)
	}
	return fmt.Sprintf("reconcile did not finish within %s", t.after)
}

func (t *timeoutError) Unwrap() error { return context.DeadlineExceeded }

// nopRecorder drops events: the recorder where none is given.
type nopRecorder struct{}

func (nopRecorder) Normal(_, _ runtime.Object, _, _, _ string)  {}
func (nopRecorder) Warning(_, _ runtime.Object, _, _, _ string) {}

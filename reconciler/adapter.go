package reconciler

import (
	"context"
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/finalizers"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/status"
)

// conflictRequeue is how soon a reconcile that hit a 409 runs again: at
// once, give or take the time the cache needs to see the newer object.
const conflictRequeue = 50 * time.Millisecond

// Adapter runs a [Reconciler] as a controller-runtime reconcile.Reconciler:
// it reads the object, runs the finalizer protocol and the user's code under
// a deadline with panics recovered, maintains kstatus conditions, and
// records metrics, a span and events. Use it with controller-runtime's own
// builder, or let kopgo's controller.Builder create it.
type Adapter[T client.Object] struct {
	name      string
	kind      string
	proto     T
	r         Reconciler[T]
	env       *Env
	o         Options
	finalizer string
}

// New returns the Adapter that runs r for objects of type T under the
// controller name.
func New[T client.Object](name string, env *Env, r Reconciler[T], opts ...Option) (*Adapter[T], error) {
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
		return nil, koperrors.WrapKind(koperrors.Config, err, "controller "+name, koperrors.Object{})
	}
	var err error
	if env.Recorder == nil {
		env.Recorder = observability.Nop{}
	}
	if o.Metrics == nil {
		if o.Metrics, err = observability.Default(); err != nil {
			return nil, err
		}
	}
	a := &Adapter[T]{name: name, kind: koperrors.ObjectOf(p).Kind, proto: p, r: r, env: env, o: o}
	if _, ok := r.(Finalizer[T]); ok {
		a.finalizer = o.FinalizerName
		if err := finalizers.Validate(a.finalizer); err != nil {
			return nil, koperrors.WrapKind(koperrors.Config, err, "controller "+name, koperrors.Object{})
		}
	}
	return a, nil
}

// Reconcile implements reconcile.Reconciler.
func (a *Adapter[T]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	start := time.Now()
	obj := a.proto.DeepCopyObject().(T)
	if err := a.env.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil // gone: nothing to do
		}
		return reconcile.Result{}, koperrors.Wrap(err, "read", koperrors.Object{
			GroupVersionKind: koperrors.ObjectOf(a.proto).GroupVersionKind, Namespace: req.Namespace, Name: req.Name,
		})
	}
	ctx, span := observability.StartReconcile(ctx, a.o.Tracer, a.name, a.kind, obj)

	setter, hasStatus := any(obj).(status.Setter)
	var patcher *status.Patcher
	var condsBefore, progress []metav1.Condition
	if hasStatus {
		patcher = status.NewPatcher(obj)
		progress = takeProgress(setter)
		condsBefore = slices.Clone(setter.GetConditions())
	}

	gone, err := a.run(ctx, obj)
	result, res, retErr := a.decide(ctx, obj, err)

	if hasStatus && !gone && result != observability.ResultConflict {
		// The user's deadline may have passed; keep a short window to
		// record the outcome.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.o.StatusWindow)
		a.updateStatus(wctx, setter, patcher, condsBefore, progress, result, err)
		cancel()
	}
	a.o.Metrics.ObserveReconcile(ctx, a.name, result, err, time.Since(start))
	observability.EndSpan(span, result, err)
	return res, retErr
}

// run performs the finalizer protocol and the user's Reconcile. gone
// reports that the object went away (its deletion finished).
func (a *Adapter[T]) run(ctx context.Context, obj T) (gone bool, err error) {
	deleting := !obj.GetDeletionTimestamp().IsZero()
	if a.finalizer == "" {
		if deleting {
			return false, nil // nothing of ours to clean up
		}
		return false, a.call(ctx, func(ctx context.Context) error { return a.r.Reconcile(ctx, obj, a.env) })
	}
	if deleting {
		if !finalizers.Has(obj, a.finalizer) {
			return false, nil
		}
		hook := a.r.(Finalizer[T])
		if err := a.call(ctx, func(ctx context.Context) error { return hook.Cleanup(ctx, obj, a.env) }); err != nil {
			return false, err
		}
		if _, err := finalizers.Remove(ctx, a.env.Client, obj, a.finalizer); err != nil {
			return false, err
		}
		a.env.Recorder.Normal(obj, "CleanedUp", "Finalize", "cleanup finished; finalizer "+a.finalizer+" removed")
		return true, nil
	}
	if _, err := finalizers.Add(ctx, a.env.Client, obj, a.finalizer); err != nil {
		return false, err
	}
	return false, a.call(ctx, func(ctx context.Context) error { return a.r.Reconcile(ctx, obj, a.env) })
}

// call runs f under the reconcile timeout, turning a panic into an error
// and a passed deadline into a Timeout error.
func (a *Adapter[T]) call(ctx context.Context, f func(context.Context) error) (err error) {
	cctx := ctx
	if a.o.Timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, a.o.Timeout)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			stack := debug.Stack()
			log.FromContext(ctx).Error(fmt.Errorf("panic: %v", r), "Reconciler panicked", "stack", string(stack))
			err = &panicError{value: r}
		}
		if cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			err = &timeoutError{after: a.o.Timeout, cause: err}
		}
	}()
	return f(cctx)
}

// decide maps the outcome to a metrics result, a controller-runtime result
// and the error controller-runtime should see (nil where kopgo handles the
// retry itself).
func (a *Adapter[T]) decide(ctx context.Context, obj T, err error) (observability.Result, reconcile.Result, error) {
	logger := log.FromContext(ctx)
	var p *panicError
	var to *timeoutError
	switch {
	case err == nil:
		return observability.ResultSuccess, reconcile.Result{}, nil
	case koperrors.As(err, &p):
		return observability.ResultPanic, reconcile.Result{}, err
	case koperrors.As(err, &to):
		a.env.Recorder.Warning(obj, "Timeout", "Reconcile", err.Error())
		return observability.ResultTimeout, a.retry(obj, err), a.retryErr(obj, err)
	case koperrors.IsRequeueOnly(err):
		d, _ := koperrors.RequeueAfterOf(err)
		if d <= 0 {
			d = conflictRequeue // "as soon as possible"; 0 would mean no requeue at all
		}
		return observability.ResultRequeue, reconcile.Result{RequeueAfter: d}, nil
	case koperrors.IsTerminal(err):
		logger.Error(err, "Reconcile failed terminally; waiting for a change")
		a.env.Recorder.Warning(obj, koperrors.KindOf(err).String(), "Reconcile", err.Error())
		return observability.ResultTerminal, reconcile.Result{}, nil
	case koperrors.IsConflict(err):
		logger.V(1).Info("Conflict, retrying", "error", err.Error())
		return observability.ResultConflict, reconcile.Result{RequeueAfter: conflictRequeue}, nil
	}
	a.env.Recorder.Warning(obj, koperrors.KindOf(err).String(), "Reconcile", err.Error())
	if d, ok := koperrors.RequeueAfterOf(err); ok {
		logger.Error(err, "Reconcile failed", "retryAfter", d)
		return observability.ResultError, reconcile.Result{RequeueAfter: d}, nil
	}
	return observability.ResultError, a.retry(obj, err), a.retryErr(obj, err)
}

// retry and retryErr apply the ErrorPolicy hook: a fixed delay (logged
// here) or controller-runtime's backoff (it logs the returned error).
func (a *Adapter[T]) retry(obj T, err error) reconcile.Result {
	if p, ok := a.r.(ErrorPolicy[T]); ok {
		if d := p.RetryAfter(obj, err); d > 0 {
			return reconcile.Result{RequeueAfter: d}
		}
	}
	return reconcile.Result{}
}

func (a *Adapter[T]) retryErr(obj T, err error) error {
	if p, ok := a.r.(ErrorPolicy[T]); ok && p.RetryAfter(obj, err) > 0 {
		return nil
	}
	return err
}

// updateStatus maintains Ready/Reconciling/Stalled and observedGeneration
// and writes status only if it changed.
//
// Reconciling and Stalled describe one reconcile, so the reconciler runs
// without them (takeProgress): if it sets either, it is reporting progress
// itself and its conditions stand; a re-set with the same status keeps its
// lastTransitionTime, so a steady "rolling out" writes nothing. Otherwise a
// success leaves a True Ready as it is (the reconciler's reason and message
// included) and turns any other Ready into Ready=True, and a failure records
// the error. Comparing conditions before and after alone cannot tell "set
// again to the same value" from "left alone".
func (a *Adapter[T]) updateStatus(ctx context.Context, obj status.Setter, p *status.Patcher, before, progress []metav1.Condition, result observability.Result, err error) {
	userProgress := status.Get(obj, status.Reconciling) != nil || status.Get(obj, status.Stalled) != nil
	userTouched := userProgress || !slices.EqualFunc(before, obj.GetConditions(), func(x, y metav1.Condition) bool {
		return x.Type == y.Type && x.Status == y.Status && x.Reason == y.Reason && x.Message == y.Message
	})
	switch result {
	case observability.ResultSuccess:
		if !userTouched && !status.IsTrue(obj, status.Ready) {
			status.MarkReady(obj, "Reconciled", "")
		}
		status.SetObservedGeneration(obj)
	case observability.ResultRequeue:
		if !userTouched {
			obj.SetConditions(append(obj.GetConditions(), progress...))
		}
	default:
		status.SetError(obj, err)
	}
	keepTransitionTimes(obj, progress)
	if _, perr := p.Patch(ctx, a.env.Client, obj, a.env.FieldOwner); perr != nil {
		log.FromContext(ctx).Error(perr, "Writing status failed")
	}
}

// takeProgress removes Reconciling and Stalled from obj and returns them.
func takeProgress(obj status.Setter) []metav1.Condition {
	var taken, kept []metav1.Condition
	for _, c := range obj.GetConditions() {
		if c.Type == status.Reconciling || c.Type == status.Stalled {
			taken = append(taken, c)
		} else {
			kept = append(kept, c)
		}
	}
	if taken != nil {
		obj.SetConditions(kept)
	}
	return taken
}

// keepTransitionTimes gives each condition of obj that has the same type and
// status as one in old that one's lastTransitionTime: takeProgress removed
// it, so setting it again looked like a transition.
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
	after time.Duration
	cause error
}

func (t *timeoutError) Error() string {
	if t.cause != nil {
		return fmt.Sprintf("reconcile did not finish within %s: %v", t.after, t.cause)
	}
	return fmt.Sprintf("reconcile did not finish within %s", t.after)
}

func (t *timeoutError) Unwrap() error { return context.DeadlineExceeded }

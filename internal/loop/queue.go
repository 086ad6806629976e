package loop

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The queue: where wake-ups are classified on their way in.
//
// The controller's queue is wrapped ([wakeQueue]) so that every add says
// what it is, in one place (see wake.go for what is done with it):
//
//   - an immediate add is news for the object, unless it comes through
//     [judged] (the primary's own events, judged by the object's state,
//     and a child's echo);
//   - a delayed add (RequeueAfter, a deferral, the loop's own requeue) is
//     a schedule: the object is due at that time;
//   - a rate-limited add (a failure, a requeue through the rate limiter)
//     asks the controller's rate limiter for the delay, as the queue
//     would, and is then a delayed add, so that the schedule is known
//     whatever rate limiter the controller has.
//
// A watch added behind kopgo's back (WithWatches) adds through the same
// queue, so its events are news: no source is ever taken for an echo.

// wakeQueue is the controller's queue as controller-runtime and every
// event handler see it. It always presents itself as a priority queue;
// over a plain one it adds as controller-runtime's own wrapper does.
type wakeQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	pq priorityqueue.PriorityQueue[reconcile.Request] // nil: a plain queue
	rl workqueue.TypedRateLimiter[reconcile.Request]
	s  *objects
}

func newWakeQueue(q workqueue.TypedRateLimitingInterface[reconcile.Request], rl workqueue.TypedRateLimiter[reconcile.Request], s *objects) *wakeQueue {
	w := &wakeQueue{TypedRateLimitingInterface: q, rl: rl, s: s}
	w.pq, _ = q.(priorityqueue.PriorityQueue[reconcile.Request])
	return w
}

// Add implements workqueue.Interface: news.
func (w *wakeQueue) Add(req reconcile.Request) {
	w.s.markNews(req.NamespacedName)
	w.TypedRateLimitingInterface.Add(req)
}

// AddAfter implements workqueue.DelayingInterface: a schedule.
func (w *wakeQueue) AddAfter(req reconcile.Request, d time.Duration) {
	if d <= 0 {
		w.Add(req)
		return
	}
	w.s.schedule(req.NamespacedName, time.Now().Add(d))
	w.TypedRateLimitingInterface.AddAfter(req, d)
}

// AddRateLimited implements workqueue.RateLimitingInterface: a schedule
// at the rate limiter's delay.
func (w *wakeQueue) AddRateLimited(req reconcile.Request) {
	w.addWithOpts(priorityqueue.AddOpts{RateLimited: true}, true, req)
}

// AddWithOpts implements priorityqueue.PriorityQueue.
func (w *wakeQueue) AddWithOpts(o priorityqueue.AddOpts, reqs ...reconcile.Request) {
	w.addWithOpts(o, true, reqs...)
}

// addWithOpts adds reqs; an immediate add is news when news is set.
func (w *wakeQueue) addWithOpts(o priorityqueue.AddOpts, news bool, reqs ...reconcile.Request) {
	for _, req := range reqs {
		one := o
		if one.RateLimited {
			one.RateLimited, one.After = false, w.rl.When(req)
		}
		switch {
		case one.After > 0:
			w.s.schedule(req.NamespacedName, time.Now().Add(one.After))
		case news:
			w.s.markNews(req.NamespacedName)
		}
		switch {
		case w.pq != nil:
			w.pq.AddWithOpts(one, req)
		case one.After > 0:
			w.TypedRateLimitingInterface.AddAfter(req, one.After)
		default:
			w.TypedRateLimitingInterface.Add(req)
		}
	}
}

// GetWithPriority implements priorityqueue.PriorityQueue.
func (w *wakeQueue) GetWithPriority() (reconcile.Request, int, bool) {
	if w.pq != nil {
		return w.pq.GetWithPriority()
	}
	req, shutdown := w.Get()
	return req, 0, shutdown
}

// judged is the queue as the handlers of events that the object's state
// judges see it: their immediate adds are not news by themselves.
type judged struct{ *wakeQueue }

// Add implements workqueue.Interface, without news.
func (j judged) Add(req reconcile.Request) { j.addWithOpts(priorityqueue.AddOpts{}, false, req) }

// AddWithOpts implements priorityqueue.PriorityQueue, without news.
func (j judged) AddWithOpts(o priorityqueue.AddOpts, reqs ...reconcile.Request) {
	j.addWithOpts(o, false, reqs...)
}

// asJudged returns q as handlers of judged events use it: q itself when
// it is not the loop's queue (a test's), else without news.
func asJudged(q workqueue.TypedRateLimitingInterface[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	if w, ok := q.(*wakeQueue); ok {
		return judged{w}
	}
	return q
}

// PrimaryHandler returns the event handler of the reconciled kind's own
// events. They are judged by the object's state when its reconcile is
// about to run, so they add no news. The informer's periodic resync (an
// update whose resourceVersion did not move) makes the object due, as a
// requeue would, unless a requeue is already asked for. The Builder puts
// it, under the primary's event filter, in place of For's handler.
func (l *Loop[T]) PrimaryHandler() handler.EventHandler {
	return primaryHandler{objs: l.objs}
}

// primaryHandler is [Loop.PrimaryHandler]'s handler. It is a type of its
// own, not a handler.Funcs, which would hand its functions a wrapper of
// the queue instead of the queue (to set priorities; the inner handler
// does that).
type primaryHandler struct {
	inner handler.EnqueueRequestForObject
	objs  *objects
}

// Create implements handler.EventHandler.
func (h primaryHandler) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.inner.Create(ctx, e, asJudged(q))
}

// Update implements handler.EventHandler.
func (h primaryHandler) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if e.ObjectOld != nil && e.ObjectNew != nil && e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion() {
		// A resync: due now, unless a requeue is already asked for (a
		// delay is not cut short).
		h.objs.resync(client.ObjectKeyFromObject(e.ObjectNew), time.Now())
	}
	h.inner.Update(ctx, e, asJudged(q))
}

// Delete implements handler.EventHandler.
func (h primaryHandler) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.inner.Delete(ctx, e, asJudged(q))
}

// Generic implements handler.EventHandler: news.
func (h primaryHandler) Generic(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.inner.Generic(ctx, e, q)
}

// OwnsHandler returns the event handler for the child kind gk, watched as
// Owns: inner (controller-runtime's handler for the controller owner)
// maps each event to the parent. A create or update that shows exactly
// the state the parent's reconcile got back from the Applier is not news
// to it; every other event is (see ownwrites.go). It must be called
// before the controller starts.
func (l *Loop[T]) OwnsHandler(gk schema.GroupKind, inner handler.EventHandler) handler.EventHandler {
	l.owned[gk] = struct{}{}
	return ownsHandler{gk: gk, inner: inner, echoes: l.echoes}
}

// ownsHandler is [Loop.OwnsHandler]'s handler (a type of its own, as
// primaryHandler is).
type ownsHandler struct {
	gk     schema.GroupKind
	inner  handler.EventHandler
	echoes *echoes
}

// queue returns q as the inner handler adds to it for an event of o: news
// unless o is the state its parent's reconcile got back.
func (h ownsHandler) queue(q workqueue.TypedRateLimitingInterface[reconcile.Request], o client.Object) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	if o == nil || h.echoes.event(childKey{gk: h.gk, key: client.ObjectKeyFromObject(o)}, o.GetUID(), o.GetResourceVersion()) {
		return q
	}
	return asJudged(q)
}

// Create implements handler.EventHandler.
func (h ownsHandler) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.inner.Create(ctx, e, h.queue(q, e.Object))
}

// Update implements handler.EventHandler.
func (h ownsHandler) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.inner.Update(ctx, e, h.queue(q, e.ObjectNew))
}

// Delete implements handler.EventHandler: news.
func (h ownsHandler) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if e.Object != nil {
		h.echoes.forget(childKey{gk: h.gk, key: client.ObjectKeyFromObject(e.Object)})
	}
	h.inner.Delete(ctx, e, q)
}

// Generic implements handler.EventHandler: news.
func (h ownsHandler) Generic(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.inner.Generic(ctx, e, q)
}

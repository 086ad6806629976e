package observability

import (
	"context"
	"encoding/json"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The worker writes events to the API server. It runs only while there
// is something to write (a queued Event, a count the server does not
// know) and ends when there is none, so a recorder nobody shuts down
// keeps no goroutine, and through its client no stopped manager's cache,
// alive.

// enqueueLocked queues s for writing unless it is queued already or the
// queue is full (then the next interval or flush sends it). r.mu is held.
func (r *EventRecorder) enqueueLocked(s *series) {
	if s.queued || s.failed {
		return
	}
	select {
	case r.queue <- s:
		s.queued = true
	default:
	}
}

// startLocked starts the worker unless it runs. r.mu is held.
func (r *EventRecorder) startLocked() {
	if r.worker == nil && !r.stopped {
		r.worker = make(chan struct{})
		go r.run(r.worker)
	}
}

// run is the worker: it writes queued Events at once, the counts of
// repeating ones every interval (every pending one at once after the
// manager stopped), and ends, closing done, when nothing is left to write
// or Shutdown cancels it.
func (r *EventRecorder) run(done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(seriesInterval)
	defer tick.Stop()
	for {
		select {
		case s := <-r.queue:
			r.write(s)
			continue
		default:
		}
		r.mu.Lock()
		if r.ctx.Err() != nil || (len(r.pending) == 0 && len(r.queue) == 0) {
			r.worker = nil
			r.forgetLocked(time.Now())
			r.mu.Unlock()
			return
		}
		closing := r.closing
		r.mu.Unlock()
		if closing {
			r.sendPending()
			continue
		}
		select {
		case s := <-r.queue:
			r.write(s)
		case <-tick.C:
			r.mu.Lock()
			r.forgetLocked(time.Now())
			r.mu.Unlock()
			r.sendPending()
		case <-r.wake:
		case <-r.ctx.Done():
		}
	}
}

// sendPending writes every series whose count the server does not know.
func (r *EventRecorder) sendPending() {
	r.mu.Lock()
	list := make([]*series, 0, len(r.pending))
	for s := range r.pending {
		list = append(list, s)
	}
	r.mu.Unlock()
	for _, s := range list {
		r.write(s)
	}
}

// flush makes every later write immediate, writes what is pending, and
// waits until nothing is left or ctx ends.
func (r *EventRecorder) flush(ctx context.Context) {
	r.mu.Lock()
	r.closing = true
	if len(r.pending) > 0 {
		r.startLocked()
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	for {
		r.mu.Lock()
		done := r.worker
		r.mu.Unlock()
		if done == nil {
			return
		}
		select {
		case <-done: // a write recorded meanwhile may have started another
		case <-ctx.Done():
			return
		}
	}
}

// write sends what the server does not know of s: the Event, or its count.
func (r *EventRecorder) write(s *series) {
	r.mu.Lock()
	s.queued = false
	if s.failed || (s.created && s.count == s.sent) {
		delete(r.pending, s)
		r.mu.Unlock()
		return
	}
	ev := s.event.DeepCopy()
	count, created := s.count, s.created
	if count > 1 {
		ev.Series = &eventsv1.EventSeries{Count: count, LastObservedTime: metav1.NewMicroTime(s.last)}
	}
	r.mu.Unlock()

	ctx, cancel := context.WithTimeout(r.ctx, writeTimeout)
	defer cancel()
	var err error
	if created {
		err = r.patchSeries(ctx, ev)
		if apierrors.IsNotFound(err) { // expired or deleted: a new Event
			created = false
		}
	}
	if !created {
		ev.Name, err = r.create(ctx, ev)
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil:
		s.created, s.sent, s.attempts = true, count, 0
		s.event.Name = ev.Name
		if s.count == s.sent {
			delete(r.pending, s)
		}
	case isRefused(err):
		r.giveUpLocked(s)
		r.log.Error(err, "Event refused by the API server", "reason", ev.Reason, "object", ev.Regarding.Name)
	case r.closing:
		// Stopping, and the API server does not answer: one attempt per
		// write, or a down API server would keep the worker, and what it
		// holds, for as many write timeouts as there are events.
		dropped := len(r.pending)
		for p := range r.pending {
			r.giveUpLocked(p)
		}
		r.log.Error(err, "Events not written: API server unavailable while stopping", "dropped", dropped)
	default:
		s.attempts++
		if s.attempts >= maxAttempts {
			r.giveUpLocked(s)
			r.log.Error(err, "Event not written: API server unavailable", "reason", ev.Reason, "object", ev.Regarding.Name)
		}
	}
}

// giveUpLocked stops writing s. r.mu is held.
func (r *EventRecorder) giveUpLocked(s *series) {
	s.failed = true
	delete(r.pending, s)
}

// create creates ev under a new name and returns the name.
func (r *EventRecorder) create(ctx context.Context, ev *eventsv1.Event) (string, error) {
	var err error
	for range 3 { // a name taken (two events in one nanosecond) gets another
		ev.Name = eventName(ev.Regarding.Name, time.Now())
		u, convErr := toUnstructured(ev)
		if convErr != nil {
			return "", convErr
		}
		if err = r.c.Create(ctx, u); !apierrors.IsAlreadyExists(err) {
			return ev.Name, err
		}
	}
	return "", err
}

// patchSeries writes ev's series into the Event named ev.Name.
func (r *EventRecorder) patchSeries(ctx context.Context, ev *eventsv1.Event) error {
	patch, err := json.Marshal(map[string]any{"series": ev.Series})
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(eventsv1.SchemeGroupVersion.WithKind("Event"))
	u.SetNamespace(ev.Namespace)
	u.SetName(ev.Name)
	return r.c.Patch(ctx, u, client.RawPatch(types.MergePatchType, patch))
}

// toUnstructured converts ev, so that writing it needs no scheme that
// knows events.k8s.io.
func toUnstructured(ev *eventsv1.Event) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ev)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(eventsv1.SchemeGroupVersion.WithKind("Event"))
	return u, nil
}

// isRefused reports an answer that retrying will not change: the event is
// invalid, RBAC forbids it, its namespace is gone or being deleted, or the
// cluster does not serve events.k8s.io/v1.
func isRefused(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err) ||
		runtime.IsNotRegisteredError(err) || apimeta.IsNoMatchError(err)
}

package observability

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/reference"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kopgo/kopgo/internal/recency"
)

// Recorder emits events.k8s.io/v1 events about objects. Emitting never
// fails and never blocks a reconcile.
type Recorder interface {
	// Normal records that something expected happened to regarding: reason
	// is a CamelCase word ("Deployed"), action what was done ("Apply"),
	// note a sentence for a person. related, if not nil, names a second
	// object the event is about (the child created, the Secret that could
	// not be read).
	Normal(regarding, related runtime.Object, reason, action, note string)
	// Warning records something a person should look at.
	Warning(regarding, related runtime.Object, reason, action, note string)
}

// EventRecorder is the [Recorder] backed by the API server: it writes
// each event once and the count of a repeating one as a series (the
// package documentation says when). Make one with [NewRecorder] or
// [NewRecorderForConfig]; call [EventRecorder.Shutdown] before the
// program exits.
type EventRecorder struct {
	c          client.Client
	scheme     *runtime.Scheme
	log        logr.Logger
	controller string
	instance   string

	mu     sync.Mutex
	series map[seriesKey]*series
	// order holds the remembered series in order of their last
	// occurrence, so that forgetting and evicting look at the old end
	// only, not at every series.
	order   recency.List[*series]
	pending map[*series]struct{} // series whose count the server does not know
	closing bool                 // its manager stopped, or Shutdown began: write at once
	stopped bool                 // Shutdown: events are dropped
	worker  chan struct{}        // closed when the running worker ends; nil when none runs

	queue chan *series
	wake  chan struct{} // tells the worker that closing began

	ctx    context.Context //nolint:containedctx // bounds every write; Shutdown cancels it
	cancel context.CancelFunc
}

// seriesKey is what makes two events repeats of one. events.k8s.io/v1
// folds isomorphic events into a series: the same object (at the same
// resourceVersion) and related object, type, reason, action, reporter
// and note. An event with another note is another event.
type seriesKey struct {
	eventType, reason, action, note string
	regarding, related              corev1.ObjectReference
}

// series is one Event and how many times it happened.
type series struct {
	event    *eventsv1.Event // as first recorded; Name set once created
	count    int32           // occurrences so far
	sent     int32           // occurrences the server knows of
	last     time.Time       // last occurrence
	created  bool
	queued   bool
	failed   bool // refused by the server, or given up
	attempts int

	links recency.Links[*series] // in the recorder's order of last occurrence
}

// NewRecorder returns a recorder that writes through mgr's client and
// reports as controller (the events' reportingController, a qualified
// name: pass the controller's field owner). It is added to mgr: when the manager stops,
// every pending count is written (within 2 seconds), and the events
// recorded afterwards, by reconciles still draining, are written at once.
// Call [EventRecorder.Shutdown] after mgr.Start returns, so that these
// are written before the program exits too.
func NewRecorder(mgr manager.Manager, controller string, opts ...RecorderOption) (*EventRecorder, error) {
	o := recorderOptions{log: mgr.GetLogger().WithName("events")}
	for _, opt := range opts {
		opt(&o)
	}
	r, err := newRecorder(mgr.GetClient(), controller, o)
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(managerHook{r}); err != nil {
		return nil, fmt.Errorf("event recorder %s: %w", controller, err)
	}
	return r, nil
}

// NewRecorderForConfig returns a recorder that writes through a client of
// its own for cfg and reports as controller: for a program without a
// manager (a CLI, a Job, a test). It knows the built-in kinds; give it
// [WithScheme] to record events about custom resources. Call
// [EventRecorder.Shutdown] before the program exits: events are written
// in the background, and Shutdown writes what is still pending.
func NewRecorderForConfig(cfg *rest.Config, controller string, opts ...RecorderOption) (*EventRecorder, error) {
	o := recorderOptions{scheme: clientgoscheme.Scheme}
	for _, opt := range opts {
		opt(&o)
	}
	c, err := client.New(cfg, client.Options{Scheme: o.scheme})
	if err != nil {
		return nil, fmt.Errorf("event recorder %s: %w", controller, err)
	}
	return newRecorder(c, controller, o)
}

func newRecorder(c client.Client, controller string, o recorderOptions) (*EventRecorder, error) {
	if errs := validation.IsQualifiedName(controller); len(errs) > 0 {
		// The API server refuses every event of such a reporter.
		return nil, fmt.Errorf("event recorder: reporting controller %q: %v", controller, errs)
	}
	instance := o.instance
	if instance == "" {
		host, _ := os.Hostname()
		instance = controller + "-" + host
		instance = instance[:min(len(instance), maxInstanceBytes)]
	} else if len(instance) > maxInstanceBytes {
		return nil, fmt.Errorf("event recorder %s: reporting instance longer than %d bytes", controller, maxInstanceBytes)
	}
	scheme := o.scheme
	if scheme == nil {
		scheme = c.Scheme()
	}
	log := o.log
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &EventRecorder{
		c: c, scheme: scheme, log: log, controller: controller, instance: instance,
		series: map[seriesKey]*series{}, pending: map[*series]struct{}{},
		queue: make(chan *series, queueLength), wake: make(chan struct{}, 1),
		ctx: ctx, cancel: cancel,
	}, nil
}

// Normal implements [Recorder].
func (r *EventRecorder) Normal(regarding, related runtime.Object, reason, action, note string) {
	r.record(regarding, related, corev1.EventTypeNormal, reason, action, note)
}

// Warning implements [Recorder].
func (r *EventRecorder) Warning(regarding, related runtime.Object, reason, action, note string) {
	r.record(regarding, related, corev1.EventTypeWarning, reason, action, note)
}

// Shutdown writes every pending event and count, within ctx, and stops
// the recorder: later events are dropped. It returns once nothing of the
// recorder runs any more. Later calls do nothing.
func (r *EventRecorder) Shutdown(ctx context.Context) {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.flush(ctx)
	r.mu.Lock()
	r.stopped = true
	done := r.worker
	r.mu.Unlock()
	r.cancel() // a write still in flight (ctx ended) is abandoned
	if done != nil {
		<-done
	}
}

func (r *EventRecorder) record(regarding, related runtime.Object, eventType, reason, action, note string) {
	if regarding == nil {
		return
	}
	ref, err := reference.GetReference(r.scheme, regarding)
	if err != nil {
		r.log.Error(err, "Event not recorded: no reference to its object", "reason", reason)
		return
	}
	note = cutNote(note)
	key := seriesKey{eventType: eventType, reason: reason, action: action, note: note, regarding: *ref}
	var relRef *corev1.ObjectReference
	if related != nil {
		if relRef, err = reference.GetReference(r.scheme, related); err == nil {
			key.related = *relRef
		}
	}
	now := time.Now()

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	s := r.series[key]
	if s != nil && (s.failed || now.Sub(s.last) > seriesExpiry) {
		s = nil // a new Event after a long pause or a refusal
	}
	if s != nil {
		s.count++
		s.last = now
		r.order.Touch(s)
		r.pending[s] = struct{}{}
		if r.closing {
			r.enqueueLocked(s)
		}
		r.startLocked()
		return
	}
	namespace := ref.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	s = &series{count: 1, last: now, event: &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Namespace: namespace},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Related:             relRef,
		Note:                note,
		Type:                eventType,
	}}
	r.rememberLocked(key, s, now)
	r.pending[s] = struct{}{}
	r.enqueueLocked(s)
	r.startLocked()
}

// rememberLocked adds s under key (in place of an ended series of the
// same key), first forgetting series that ended long ago and, when
// maxSeries are remembered still, the series seen least recently among
// those the server knows in full: a repeat of a forgotten event starts a
// new Event, nothing is lost. r.mu is held.
func (r *EventRecorder) rememberLocked(key seriesKey, s *series, now time.Time) {
	if old := r.series[key]; old != nil {
		r.order.Remove(old)
		delete(r.series, key)
	}
	if len(r.series) >= maxSeries {
		r.forgetLocked(now)
	}
	for old := r.order.Oldest(); old != nil && len(r.series) >= maxSeries; {
		newer := recency.Newer(old)
		if _, p := r.pending[old]; !p {
			r.order.Remove(old)
			delete(r.series, old.key())
		}
		// else: pending, the worker drains it; it stays.
		old = newer
	}
	r.series[key] = s
	r.order.Touch(s)
}

// forgetLocked forgets the series whose last occurrence is older than
// seriesExpiry and whose count the server knows: it walks from the oldest
// series to the first one still open. r.mu is held.
func (r *EventRecorder) forgetLocked(now time.Time) {
	for s := r.order.Oldest(); s != nil && now.Sub(s.last) > seriesExpiry; {
		newer := recency.Newer(s)
		if _, p := r.pending[s]; !p {
			r.order.Remove(s)
			delete(r.series, s.key())
		}
		s = newer
	}
}

// key is the key s is remembered under, from its event (which holds every
// field of the key), so that the series need not hold a second copy.
func (s *series) key() seriesKey {
	k := seriesKey{eventType: s.event.Type, reason: s.event.Reason, action: s.event.Action, note: s.event.Note, regarding: s.event.Regarding}
	if s.event.Related != nil {
		k.related = *s.event.Related
	}
	return k
}

// RecencyLinks implements recency.Element.
func (s *series) RecencyLinks() *recency.Links[*series] { return &s.links }

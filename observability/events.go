package observability

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/reference"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kopgo/kopgo/internal/truncate"
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

// Tuning of the EventRecorder; variables so that tests can shorten them.
var (
	// seriesInterval is how often the count of a repeating event is
	// written: at most once per interval per series, and at shutdown.
	seriesInterval = 30 * time.Second
	// seriesExpiry is how long a series stays open after its last repeat;
	// a later repeat starts a new Event (client-go's broadcaster uses 6
	// minutes too).
	seriesExpiry = 6 * time.Minute
)

const (
	// queueLength bounds the writes waiting to be sent; a series whose
	// write finds the queue full is sent at the next interval instead.
	queueLength = 1000
	// writeTimeout bounds one request to the API server.
	writeTimeout = 10 * time.Second
	// maxAttempts is how often a series is tried when the API server does
	// not answer, before it is given up.
	maxAttempts = 12
	// flushTimeout bounds the flush when the manager stops: event counts
	// must not eat the graceful-shutdown window that draining reconciles
	// need (with writes slowed to a second each, a 10 s flush took most of
	// a 25 s window). A healthy API server takes a few hundred writes in it.
	flushTimeout = 2 * time.Second
)

// EventRecorder is the [Recorder] backed by the API server. It folds
// repeats of an event into one Event with a series count, as client-go's
// broadcaster does, but writes the count itself: the first occurrence at
// once, the count of a repeating event at most every 30 seconds, and every
// pending count when the manager stops and at [EventRecorder.Shutdown], so
// the count on the server is true when the operator exits.
type EventRecorder struct {
	c          client.Client
	log        logr.Logger
	controller string
	instance   string

	mu      sync.Mutex
	series  map[seriesKey]*series
	closing bool // the manager stopped: every write is sent at once
	stopped bool // Shutdown: events are dropped

	queue  chan *series
	flush  chan chan struct{}
	start  sync.Once
	ctx    context.Context //nolint:containedctx // the worker's lifetime, ended by Shutdown
	cancel context.CancelFunc
	done   chan struct{}
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
	failed   bool // refused by the server, or out of attempts
	attempts int
}

// NewRecorder returns a Recorder that reports as controller (the events'
// reportingController) through mgr's client, and adds it to mgr so that
// the pending counts are written when the manager stops. Call
// [EventRecorder.Shutdown] after mgr.Start returns for counts that are true
// at exit also for events recorded while the manager drained.
func NewRecorder(mgr manager.Manager, controller string) (*EventRecorder, error) {
	if controller == "" {
		return nil, fmt.Errorf("event recorder: controller name is empty")
	}
	r := newRecorder(mgr.GetClient(), mgr.GetLogger().WithName("events"), controller)
	if err := mgr.Add(runnable{r}); err != nil {
		return nil, fmt.Errorf("event recorder %s: %w", controller, err)
	}
	return r, nil
}

func newRecorder(c client.Client, log logr.Logger, controller string) *EventRecorder {
	host, _ := os.Hostname()
	instance := controller + "-" + host
	if len(instance) > 128 { // the API's limit on reportingInstance
		instance = instance[:128]
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &EventRecorder{
		c: c, log: log, controller: controller, instance: instance,
		series: map[seriesKey]*series{},
		queue:  make(chan *series, queueLength), flush: make(chan chan struct{}),
		ctx: ctx, cancel: cancel, done: make(chan struct{}),
	}
}

// Normal implements [Recorder].
func (r *EventRecorder) Normal(regarding, related runtime.Object, reason, action, note string) {
	r.record(regarding, related, corev1.EventTypeNormal, reason, action, note)
}

// Warning implements [Recorder].
func (r *EventRecorder) Warning(regarding, related runtime.Object, reason, action, note string) {
	r.record(regarding, related, corev1.EventTypeWarning, reason, action, note)
}

// Shutdown writes every pending count, within ctx, and stops the
// recorder; later events are dropped. Later calls do nothing.
func (r *EventRecorder) Shutdown(ctx context.Context) {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	r.closing = true
	r.mu.Unlock()
	r.flushAll(ctx)
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	r.cancel()
	r.start.Do(func() { close(r.done) }) // never started: nothing to wait for
	<-r.done
}

func (r *EventRecorder) record(regarding, related runtime.Object, eventType, reason, action, note string) {
	if regarding == nil {
		return
	}
	scheme := r.c.Scheme()
	ref, err := reference.GetReference(scheme, regarding)
	if err != nil {
		r.log.Error(err, "Event not recorded: no reference to its object", "reason", reason)
		return
	}
	note = cutNote(note)
	key := seriesKey{eventType: eventType, reason: reason, action: action, note: note, regarding: *ref}
	var relRef *corev1.ObjectReference
	if related != nil {
		if relRef, err = reference.GetReference(scheme, related); err == nil {
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
		if r.closing {
			r.enqueueLocked(s)
		}
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
	r.series[key] = s
	r.start.Do(func() { go r.run() })
	r.enqueueLocked(s)
}

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

// run is the worker: it sends queued writes, the pending counts every
// interval, and flushes on request, until Shutdown.
func (r *EventRecorder) run() {
	defer close(r.done)
	tick := time.NewTicker(seriesInterval)
	defer tick.Stop()
	for {
		select {
		case s := <-r.queue:
			r.write(s)
		case <-tick.C:
			r.sendPending(time.Now())
		case done := <-r.flush:
			r.drain()
			r.sendPending(time.Time{})
			close(done)
		case <-r.ctx.Done():
			return
		}
	}
}

// drain writes everything queued.
func (r *EventRecorder) drain() {
	for {
		select {
		case s := <-r.queue:
			r.write(s)
		default:
			return
		}
	}
}

// sendPending writes every series whose count the server does not know,
// and forgets series that ended before now-seriesExpiry (a zero now
// forgets none).
func (r *EventRecorder) sendPending(now time.Time) {
	r.mu.Lock()
	var pending []*series
	for k, s := range r.series {
		switch {
		case !s.failed && (s.count != s.sent || !s.created):
			pending = append(pending, s)
		case !now.IsZero() && now.Sub(s.last) > seriesExpiry:
			delete(r.series, k)
		}
	}
	r.mu.Unlock()
	for _, s := range pending {
		r.write(s)
	}
}

// flushAll asks the worker to write every pending count and waits for it,
// or for ctx.
func (r *EventRecorder) flushAll(ctx context.Context) {
	r.mu.Lock()
	started := len(r.series) > 0
	r.mu.Unlock()
	if !started {
		return
	}
	done := make(chan struct{})
	select {
	case r.flush <- done:
	case <-ctx.Done():
		return
	case <-r.done:
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// write sends what the server does not know of s: the Event, or its count.
func (r *EventRecorder) write(s *series) {
	r.mu.Lock()
	s.queued = false
	if s.failed || (s.created && s.count == s.sent) {
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
	case isRefused(err):
		s.failed = true
		r.log.Error(err, "Event refused by the API server", "reason", ev.Reason, "object", ev.Regarding.Name)
	default:
		s.attempts++
		if s.attempts >= maxAttempts {
			s.failed = true
			r.log.Error(err, "Event not written: API server unavailable", "reason", ev.Reason, "object", ev.Regarding.Name)
		}
	}
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

// eventName is "<object name>.<time in hex>", the name client-go gives an
// Event, with the object name cut (and, if it is no DNS subdomain, cleaned)
// so that the whole stays a valid name of at most 253 characters.
func eventName(object string, t time.Time) string {
	suffix := fmt.Sprintf(".%x", t.UnixNano())
	name := object + suffix
	if len(validation.IsDNS1123Subdomain(name)) == 0 {
		return name
	}
	prefix := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return '-'
	}, object)
	prefix = prefix[:min(len(prefix), validation.DNS1123SubdomainMaxLength-len(suffix))]
	prefix = strings.Trim(prefix, "-.")
	if name = prefix + suffix; prefix != "" && len(validation.IsDNS1123Subdomain(name)) == 0 {
		return name
	}
	return "event" + suffix
}

// runnable ties the recorder to the manager: when the manager stops, the
// pending counts are written and every later event is written at once
// (reconciles still draining may record some); stopAfter later the
// recorder shuts itself down, so that its worker, and through the client
// the stopped manager's cache, are not kept alive by a caller who never
// calls Shutdown (a controller added to a manager with Builder.Setup).
type runnable struct{ r *EventRecorder }

// stopAfter is how long after its manager stopped the recorder still
// writes events: longer than the default graceful-shutdown window (30 s),
// in which reconciles drain and may record.
var stopAfter atomic.Int64 // nanoseconds; 35 s, set in init

func init() { stopAfter.Store(int64(35 * time.Second)) }

// Start waits for the manager to stop, then flushes.
func (rn runnable) Start(ctx context.Context) error {
	<-ctx.Done()
	rn.r.mu.Lock()
	rn.r.closing = true
	rn.r.mu.Unlock()
	flushCtx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	rn.r.flushAll(flushCtx)
	linger := time.Duration(stopAfter.Load())
	go func() {
		time.Sleep(linger)
		ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		defer cancel()
		rn.r.Shutdown(ctx)
	}()
	return nil
}

// NeedLeaderElection reports false: every replica records events.
func (runnable) NeedLeaderElection() bool { return false }

// Event is one event a [FakeRecorder] received.
type Event struct {
	Type, Reason, Action, Note string
	// Regarding is the object the event is about; Related the second
	// object it names, or nil.
	Regarding, Related runtime.Object
}

// FakeRecorder keeps events in memory, for users' tests. Its zero value is
// ready to use.
type FakeRecorder struct {
	mu     sync.Mutex
	events []Event
}

// Normal implements [Recorder].
func (f *FakeRecorder) Normal(regarding, related runtime.Object, reason, action, note string) {
	f.add(Event{Type: corev1.EventTypeNormal, Reason: reason, Action: action, Note: note, Regarding: regarding, Related: related})
}

// Warning implements [Recorder].
func (f *FakeRecorder) Warning(regarding, related runtime.Object, reason, action, note string) {
	f.add(Event{Type: corev1.EventTypeWarning, Reason: reason, Action: action, Note: note, Regarding: regarding, Related: related})
}

func (f *FakeRecorder) add(e Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, e)
}

// Events returns the events received so far, oldest first.
func (f *FakeRecorder) Events() []Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Event(nil), f.events...)
}

// maxNoteBytes is the API server's limit on an events.k8s.io/v1 note; a
// longer note gets the whole event refused, so nothing would be recorded.
const maxNoteBytes = 1024

// cutNote shortens note to maxNoteBytes, on a UTF-8 boundary, marking the
// cut with an ellipsis.
func cutNote(note string) string { return truncate.String(note, maxNoteBytes) }

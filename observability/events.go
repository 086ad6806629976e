package observability

import (
	"context"
	"sync"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
)

// Recorder emits events.k8s.io/v1 events about objects. Emitting never
// fails and never blocks a reconcile: events are sent in the background,
// and repeats of the same event are folded into one Event with a series
// count by client-go's broadcaster.
type Recorder interface {
	// Normal records that something expected happened: reason is a
	// CamelCase word ("Deployed"), action what was done ("Apply"), note a
	// sentence for a person.
	Normal(obj runtime.Object, reason, action, note string)
	// Warning records something a person should look at.
	Warning(obj runtime.Object, reason, action, note string)
}

// RelatedRecorder is a [Recorder] that can name a second object an event is
// about, the event's "related" object: the child a controller created, the
// Secret it could not read. Events with different related objects never fold
// into one series, so "ConfigMap a created" and "ConfigMap b created" stay
// two events under one reason. Every Recorder of this package implements it;
// [NormalRelated] and [WarningRelated] use it through any Recorder.
type RelatedRecorder interface {
	Recorder
	// NormalRelated is Normal with a related object.
	NormalRelated(obj, related runtime.Object, reason, action, note string)
	// WarningRelated is Warning with a related object.
	WarningRelated(obj, related runtime.Object, reason, action, note string)
}

// NormalRelated records a Normal event about obj naming related, through
// r's NormalRelated when r is a [RelatedRecorder] and r.Normal (without the
// related object) otherwise.
func NormalRelated(r Recorder, obj, related runtime.Object, reason, action, note string) {
	if rr, ok := r.(RelatedRecorder); ok {
		rr.NormalRelated(obj, related, reason, action, note)
		return
	}
	r.Normal(obj, reason, action, note)
}

// WarningRelated is [NormalRelated] for a Warning event.
func WarningRelated(r Recorder, obj, related runtime.Object, reason, action, note string) {
	if rr, ok := r.(RelatedRecorder); ok {
		rr.WarningRelated(obj, related, reason, action, note)
		return
	}
	r.Warning(obj, reason, action, note)
}

// EventRecorder is the [Recorder] backed by the API server.
type EventRecorder struct {
	recorder    events.EventRecorder
	broadcaster events.EventBroadcaster
	stop        context.CancelFunc
	shutdown    sync.Once
}

// NewRecorder returns a Recorder that reports as controller through cfg,
// resolving kinds with scheme. Call Shutdown to flush and stop it, or add it
// to a controller-runtime manager (mgr.Add(recorder)), which then does.
func NewRecorder(cfg *rest.Config, scheme *runtime.Scheme, controller string) (*EventRecorder, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		cancel()
		return nil, err
	}
	return &EventRecorder{recorder: b.NewRecorder(scheme, controller), broadcaster: b, stop: cancel}, nil
}

// Normal implements [Recorder].
func (r *EventRecorder) Normal(obj runtime.Object, reason, action, note string) {
	r.NormalRelated(obj, nil, reason, action, note)
}

// Warning implements [Recorder].
func (r *EventRecorder) Warning(obj runtime.Object, reason, action, note string) {
	r.WarningRelated(obj, nil, reason, action, note)
}

// NormalRelated implements [RelatedRecorder].
func (r *EventRecorder) NormalRelated(obj, related runtime.Object, reason, action, note string) {
	r.recorder.Eventf(obj, related, corev1.EventTypeNormal, reason, action, "%s", cutNote(note))
}

// WarningRelated implements [RelatedRecorder].
func (r *EventRecorder) WarningRelated(obj, related runtime.Object, reason, action, note string) {
	r.recorder.Eventf(obj, related, corev1.EventTypeWarning, reason, action, "%s", cutNote(note))
}

// Shutdown stops the recorder after sending what is queued. Later calls do
// nothing.
func (r *EventRecorder) Shutdown() {
	r.shutdown.Do(func() {
		r.broadcaster.Shutdown()
		r.stop()
	})
}

// Start makes the recorder a controller-runtime manager.Runnable: it waits
// until ctx ends (the manager stops), then shuts the recorder down. Events
// are recorded before Start too; Start only ties the shutdown to the
// manager.
func (r *EventRecorder) Start(ctx context.Context) error {
	<-ctx.Done()
	r.Shutdown()
	return nil
}

// NeedLeaderElection reports false: every replica records events, leader or
// not, and each must shut its recorder down.
func (r *EventRecorder) NeedLeaderElection() bool { return false }

// Nop is a Recorder that records nothing: the default where none is given.
type Nop struct{}

// Normal implements [Recorder].
func (Nop) Normal(runtime.Object, string, string, string) {}

// Warning implements [Recorder].
func (Nop) Warning(runtime.Object, string, string, string) {}

// NormalRelated implements [RelatedRecorder].
func (Nop) NormalRelated(runtime.Object, runtime.Object, string, string, string) {}

// WarningRelated implements [RelatedRecorder].
func (Nop) WarningRelated(runtime.Object, runtime.Object, string, string, string) {}

// Event is one event a [FakeRecorder] received.
type Event struct {
	Type, Reason, Action, Note string
	Object                     runtime.Object
	// Related is the related object, if the event named one.
	Related runtime.Object
}

// FakeRecorder keeps events in memory, for users' tests.
type FakeRecorder struct {
	mu     sync.Mutex
	events []Event
}

// Normal implements [Recorder].
func (f *FakeRecorder) Normal(obj runtime.Object, reason, action, note string) {
	f.NormalRelated(obj, nil, reason, action, note)
}

// Warning implements [Recorder].
func (f *FakeRecorder) Warning(obj runtime.Object, reason, action, note string) {
	f.WarningRelated(obj, nil, reason, action, note)
}

// NormalRelated implements [RelatedRecorder].
func (f *FakeRecorder) NormalRelated(obj, related runtime.Object, reason, action, note string) {
	f.add(Event{Type: corev1.EventTypeNormal, Reason: reason, Action: action, Note: note, Object: obj, Related: related})
}

// WarningRelated implements [RelatedRecorder].
func (f *FakeRecorder) WarningRelated(obj, related runtime.Object, reason, action, note string) {
	f.add(Event{Type: corev1.EventTypeWarning, Reason: reason, Action: action, Note: note, Object: obj, Related: related})
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
func cutNote(note string) string {
	if len(note) <= maxNoteBytes {
		return note
	}
	const ellipsis = "…"
	cut := maxNoteBytes - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + ellipsis
}

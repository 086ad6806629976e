package observability

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

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

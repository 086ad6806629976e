package loop

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// obj returns the object at key with uid, version, generation and
// annotations.
func objWith(uid string, rv string, gen int64, annotations map[string]string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: key.Namespace, Name: key.Name, UID: types.UID(uid), ResourceVersion: rv, Generation: gen, Annotations: annotations,
	}}
}

// The wake rule (wake.go): a wake-up runs the reconciler when the object
// changed since the last reconcile acted on it, when news came, or when a
// requeue is due; a delay the error asked for holds for every wake-up.
func TestJudge(t *testing.T) {
	t0 := time.Now()
	acted := func(s *objects, o *metav1.PartialObjectMetadata) {
		s.begin(key, o)
		s.end(key, o.GetUID(), time.Time{})
	}
	tests := []struct {
		name string
		// setup brings the store to the moment of the wake-up.
		setup      func(s *objects)
		everyRV    bool
		cached     *metav1.PartialObjectMetadata
		want       wakeReason
		wantAfters time.Duration
	}{
		{name: "first time", setup: func(*objects) {}, cached: objWith("u1", "10", 1, nil), want: wakeNew},
		{
			name:   "nothing new: the echo of our status write",
			setup:  func(s *objects) { acted(s, objWith("u1", "10", 1, nil)) },
			cached: objWith("u1", "11", 1, nil), want: skipNothing,
		},
		{
			name:   "a new generation",
			setup:  func(s *objects) { acted(s, objWith("u1", "10", 1, nil)) },
			cached: objWith("u1", "12", 2, nil), want: wakeChanged,
		},
		{
			name:   "someone else's annotation",
			setup:  func(s *objects) { acted(s, objWith("u1", "10", 1, nil)) },
			cached: objWith("u1", "12", 1, map[string]string{"a": "1"}), want: wakeChanged,
		},
		{
			name: "our own annotation, folded in",
			setup: func(s *objects) {
				s.begin(key, objWith("u1", "10", 1, nil))
				sent := objWith("u1", "10", 1, map[string]string{"a": "1"})
				s.wroteMeta(key, s.fingerprint(sent), "", objWith("u1", "11", 1, map[string]string{"a": "1"}))
				s.end(key, "u1", time.Time{})
			},
			cached: objWith("u1", "11", 1, map[string]string{"a": "1"}), want: skipNothing,
		},
		{
			name: "our own annotation and someone else's, merged into one event",
			setup: func(s *objects) {
				s.begin(key, objWith("u1", "10", 1, nil))
				sent := objWith("u1", "10", 1, map[string]string{"a": "1"})
				s.wroteMeta(key, s.fingerprint(sent), "", objWith("u1", "12", 1, map[string]string{"a": "1", "b": "2"}))
				s.end(key, "u1", time.Time{})
			},
			cached: objWith("u1", "12", 1, map[string]string{"a": "1", "b": "2"}), want: wakeChanged,
		},
		{
			name: "news from a related object",
			setup: func(s *objects) {
				acted(s, objWith("u1", "10", 1, nil))
				s.markNews(key)
			},
			cached: objWith("u1", "10", 1, nil), want: wakeNews,
		},
		{
			name: "news that came while the reconcile ran",
			setup: func(s *objects) {
				s.begin(key, objWith("u1", "10", 1, nil))
				s.markNews(key)
				s.end(key, "u1", time.Time{})
			},
			cached: objWith("u1", "10", 1, nil), want: wakeNews,
		},
		{
			name: "news consumed by the reconcile that ran for it",
			setup: func(s *objects) {
				s.markNews(key)
				acted(s, objWith("u1", "10", 1, nil))
			},
			cached: objWith("u1", "10", 1, nil), want: skipNothing,
		},
		{
			name: "a requeue due later",
			setup: func(s *objects) {
				acted(s, objWith("u1", "10", 1, nil))
				s.schedule(key, t0.Add(time.Minute))
			},
			cached: objWith("u1", "11", 1, nil), want: skipNotDue, wantAfters: time.Minute,
		},
		{
			name: "a requeue due now",
			setup: func(s *objects) {
				acted(s, objWith("u1", "10", 1, nil))
				s.schedule(key, t0)
			},
			cached: objWith("u1", "10", 1, nil), want: wakeDue,
		},
		{
			name: "the error's delay holds against news",
			setup: func(s *objects) {
				s.begin(key, objWith("u1", "10", 1, nil))
				s.end(key, "u1", t0.Add(3*time.Second))
				s.markNews(key)
			},
			cached: objWith("u1", "12", 2, nil), want: skipRetryAfter, wantAfters: 3 * time.Second,
		},
		{
			name: "a resync with nothing scheduled",
			setup: func(s *objects) {
				acted(s, objWith("u1", "10", 1, nil))
				s.resync(key, t0)
			},
			cached: objWith("u1", "10", 1, nil), want: wakeDue,
		},
		{
			name: "a resync does not cut a backoff short",
			setup: func(s *objects) {
				acted(s, objWith("u1", "10", 1, nil))
				s.schedule(key, t0.Add(time.Minute))
				s.resync(key, t0)
			},
			cached: objWith("u1", "10", 1, nil), want: skipNotDue, wantAfters: time.Minute,
		},
		{
			name:   "another object of the same name",
			setup:  func(s *objects) { acted(s, objWith("u1", "10", 1, nil)) },
			cached: objWith("u2", "10", 1, nil), want: wakeNew,
		},
		{
			name:   "a kind without generation: a new version",
			setup:  func(s *objects) { acted(s, objWith("u1", "10", 0, nil)) },
			cached: objWith("u1", "11", 0, nil), want: wakeChanged,
		},
		{
			name:    "the user's filter: a new version",
			setup:   func(s *objects) { acted(s, objWith("u1", "10", 1, nil)) },
			everyRV: true, cached: objWith("u1", "11", 1, nil), want: wakeChanged,
		},
		{
			name: "a kind without generation: our own Update made on what was read",
			setup: func(s *objects) {
				s.begin(key, objWith("u1", "10", 0, nil))
				sent := objWith("u1", "10", 0, map[string]string{"a": "1"})
				s.wroteMeta(key, s.fingerprint(sent), "10", objWith("u1", "11", 0, map[string]string{"a": "1"}))
				s.end(key, "u1", time.Time{})
			},
			cached: objWith("u1", "11", 0, map[string]string{"a": "1"}), want: skipNothing,
		},
		{
			name: "a kind without generation: our own Update made on an older version",
			setup: func(s *objects) {
				s.begin(key, objWith("u1", "10", 0, nil))
				sent := objWith("u1", "9", 0, map[string]string{"a": "1"})
				s.wroteMeta(key, s.fingerprint(sent), "9", objWith("u1", "11", 0, map[string]string{"a": "1"}))
				s.end(key, "u1", time.Time{})
			},
			cached: objWith("u1", "11", 0, map[string]string{"a": "1"}), want: wakeChanged,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newObjects("", tt.everyRV)
			tt.setup(s)
			got, after := s.judge(key, tt.cached, t0)
			if got != tt.want {
				t.Errorf("judge = %d, want %d", got, tt.want)
			}
			if after != tt.wantAfters {
				t.Errorf("requeue after %s, want %s", after, tt.wantAfters)
			}
		})
	}
}

// A schedule keeps the earliest requeue still ahead, as the queue does.
func TestScheduleKeepsTheEarliest(t *testing.T) {
	s := newObjects("", false)
	now := time.Now()
	s.schedule(key, now.Add(time.Minute))
	s.schedule(key, now.Add(time.Hour))
	s.schedule(key, now.Add(time.Second))
	if got := s.m[key].due; !got.Equal(now.Add(time.Second)) {
		t.Errorf("due %s from now, want 1s", got.Sub(now))
	}
}

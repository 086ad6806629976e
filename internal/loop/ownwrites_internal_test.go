package loop

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

func objAt(uid, rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", UID: types.UID(uid), ResourceVersion: rv}}
}

var key = types.NamespacedName{Namespace: "ns", Name: "w"}

// A child's event is news to its parent unless it shows exactly the state
// the parent's reconcile got back from the Applier, whether it arrives
// after the write's answer or before it; one judged provisionally that
// turns out to show another state wakes the parent with news.
func TestChildEchoes(t *testing.T) {
	tests := []struct {
		name string
		// rv the write returns; the versions of events before and after it.
		rv            string
		before, after []string
		wantNews      []bool // for before, then after
		wantWoken     int
	}{
		{name: "event after the answer", rv: "11", after: []string{"11"}, wantNews: []bool{false}},
		{name: "event before the answer", rv: "11", before: []string{"11"}, wantNews: []bool{false}},
		{name: "someone else's change after ours", rv: "11", after: []string{"11", "12"}, wantNews: []bool{false, true}},
		{name: "merged: someone else's change and ours in one event", rv: "11", after: []string{"12"}, wantNews: []bool{true}},
		{name: "an older event", rv: "11", after: []string{"10", "11"}, wantNews: []bool{false, false}},
		{
			name: "someone else's change seen while ours was in flight", rv: "12",
			before: []string{"11"}, after: []string{"12"}, wantNews: []bool{false, true}, wantWoken: 1,
		},
		{name: "a failed write", rv: "", before: []string{"11"}, wantNews: []bool{false}, wantWoken: 1},
		{name: "a failed write, later events", rv: "", after: []string{"11"}, wantNews: []bool{true}},
	}
	k := childKey{gk: schema.GroupKind{Kind: "ConfigMap"}, key: key}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			woken := 0
			e := newEchoes(func(reconcile.Request) { woken++ })
			var news []bool
			w := e.begin(k, "u1", reconcile.Request{NamespacedName: key})
			for _, rv := range tt.before {
				news = append(news, e.event(k, "u1", rv))
			}
			uid := types.UID("u1")
			if tt.rv == "" {
				uid = ""
			}
			e.done(k, w, uid, tt.rv)
			for _, rv := range tt.after {
				news = append(news, e.event(k, "u1", rv))
			}
			if fmt.Sprint(news) != fmt.Sprint(tt.wantNews) {
				t.Errorf("news %v, want %v", news, tt.wantNews)
			}
			if woken != tt.wantWoken {
				t.Errorf("parent woken %d times, want %d", woken, tt.wantWoken)
			}
			if tt.after != nil || tt.rv == "" || tt.before != nil {
				e.forget(k)
			}
			if n := e.size(); n != 0 {
				t.Errorf("%d children kept after their echo, want 0", n)
			}
		})
	}
	t.Run("another object of the same name", func(t *testing.T) {
		e := newEchoes(func(reconcile.Request) {})
		w := e.begin(k, "u1", reconcile.Request{NamespacedName: key})
		e.done(k, w, "u1", "11")
		if !e.event(k, "u2", "11") {
			t.Error("an event of another object with the same name and version is not news")
		}
	})
}

// A read older than our last write is stale until the cache shows it (or
// a newer version); a read of another object under the same name is not;
// versions that are not comparable are never stale.
func TestStaleReads(t *testing.T) {
	s := newObjects("", false)
	s.wrote(key, "u1", "12")
	now := time.Now()
	if stale, n, since := s.stale(key, objAt("u1", "10"), now); !stale || n != 1 || !since.Equal(now) {
		t.Errorf("read at 10 after our write at 12: stale %v, deferrals %d, since %v; want stale, 1, now", stale, n, since)
	}
	if stale, n, since := s.stale(key, objAt("u1", "11"), now.Add(time.Second)); !stale || n != 2 || !since.Equal(now) {
		t.Errorf("read at 11: stale %v, deferrals %d, since %v; want stale, 2, the first deferral's time", stale, n, since)
	}
	if stale, _, _ := s.stale(key, objAt("u1", "x"), now); stale {
		t.Error("a version that is not an integer is stale; want fail open")
	}
	if stale, _, _ := s.stale(key, objAt("u1", "12"), now); stale {
		t.Error("a read at our write's version is stale")
	}
	if stale, _, _ := s.stale(key, objAt("u1", "10"), now); stale {
		t.Error("stale once the cache showed our write")
	}

	s.wrote(key, "u1", "20")
	if stale, _, _ := s.stale(key, objAt("u2", "15"), now); stale {
		t.Error("another object under the same name is stale")
	}

	s.wrote(key, "u1", "20")
	s.giveUp(key)
	if stale, _, _ := s.stale(key, objAt("u1", "15"), now); stale {
		t.Error("stale after giveUp")
	}
	s.forget(key)
	if n := s.size(); n != 0 {
		t.Errorf("%d objects after forget, want 0", n)
	}
}

func TestDeferDelay(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 5 * time.Millisecond, 2: 10 * time.Millisecond, 7: 320 * time.Millisecond, 8: 500 * time.Millisecond, 100: 500 * time.Millisecond} {
		if got := deferDelay(n); got != want {
			t.Errorf("deferDelay(%d) = %s, want %s", n, got, want)
		}
	}
}

// The set of finished cleanups remembers a UID for at least its period,
// and forgets it after two.
func TestUIDSet(t *testing.T) {
	now := time.Unix(0, 0)
	s := newUIDSet(time.Minute)
	s.now = func() time.Time { return now }
	s.rotatedAt = now
	s.add("a")
	now = now.Add(90 * time.Second)
	s.add("b") // rotates: a is in the older generation
	if !s.has("a") || !s.has("b") {
		t.Fatalf("has a %v, b %v; want both within their period", s.has("a"), s.has("b"))
	}
	now = now.Add(90 * time.Second)
	s.add("c") // rotates again: a is dropped
	if s.has("a") || !s.has("b") || !s.has("c") {
		t.Errorf("has a %v, b %v, c %v; want false, true, true", s.has("a"), s.has("b"), s.has("c"))
	}
}

// Only the API server's own unavailability gets the short backoff cap.
func TestFromAPIServerOutage(t *testing.T) {
	const apiServer = "https://127.0.0.1:6443"
	refusedBy := func(host string) error {
		return koperrors.Wrap(&url.Error{Op: "Get", URL: "https://" + host + "/apis/x", Err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}},
			"read", kopmeta.ObjectRef{Kind: "Widget", Name: "w"})
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"API server refuses connections", refusedBy("127.0.0.1:6443"), true},
		{"API server answers 503", apierrors.NewServiceUnavailable("etcd leader changed"), true},
		{"API server times out", apierrors.NewTimeoutError("request timed out", 1), true},
		{"external host refuses connections", refusedBy("127.0.0.1:8080"), false},
		{"external 503 as a kopgo error", koperrors.Errorf(koperrors.Unavailable, "provider: 503"), false},
		{"reconcile deadline", &timeoutError{after: time.Second}, false},
		{"API server refuses a write: not an outage", apierrors.NewInvalid(schema.GroupKind{Kind: "Widget"}, "w", nil), false},
		{"http error from an external call", fmt.Errorf("call: %w", &url.Error{Op: "Get", URL: "http://example.invalid", Err: http.ErrHandlerTimeout}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fromAPIServerOutage(tt.err, apiServer); got != tt.want {
				t.Errorf("fromAPIServerOutage(%v) = %v, want %v (kind %s)", tt.err, got, tt.want, koperrors.KindOf(tt.err))
			}
		})
	}
}

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

// The event of an accounted write is dropped, whether it arrives after the
// write's response or before it; an event showing someone else's change
// is kept, and one dropped provisionally for a write that then returned
// another version is made good by an enqueue.
func TestOwnWriteEvents(t *testing.T) {
	tests := []struct {
		name string
		// rv the write returns; events (old -> new) before and after it.
		rv            string
		before, after [][2]string
		accounted     bool
		wantKept      []bool // for before, then after
		wantEnqueued  int
	}{
		{name: "event after the response", rv: "11", after: [][2]string{{"10", "11"}}, accounted: true, wantKept: []bool{false}},
		{name: "event before the response", rv: "11", before: [][2]string{{"10", "11"}}, accounted: true, wantKept: []bool{false}},
		{name: "someone else's change first", rv: "12", after: [][2]string{{"10", "11"}, {"11", "12"}}, accounted: true, wantKept: []bool{true, true}},
		{
			name: "someone else's change seen while ours was in flight", rv: "12",
			before: [][2]string{{"10", "11"}}, after: [][2]string{{"11", "12"}}, accounted: true,
			wantKept: []bool{false, true}, wantEnqueued: 1,
		},
		{name: "the reconciler's own write", rv: "11", after: [][2]string{{"10", "11"}}, accounted: false, wantKept: []bool{true}},
		{name: "a write that changed nothing", rv: "10", after: [][2]string{{"10", "11"}}, accounted: true, wantKept: []bool{true}},
		{name: "a failed write", rv: "", before: [][2]string{{"10", "11"}}, accounted: true, wantKept: []bool{false}, wantEnqueued: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enqueued := 0
			w := newOwnWrites(func(reconcile.Request) { enqueued++ })
			var kept []bool
			e := w.begin(objAt("u1", "10"), tt.accounted)
			for _, ev := range tt.before {
				kept = append(kept, w.observed(objAt("u1", ev[0]), objAt("u1", ev[1])))
			}
			w.finish(key, e, tt.rv)
			for _, ev := range tt.after {
				kept = append(kept, w.observed(objAt("u1", ev[0]), objAt("u1", ev[1])))
			}
			if fmt.Sprint(kept) != fmt.Sprint(tt.wantKept) {
				t.Errorf("events kept %v, want %v", kept, tt.wantKept)
			}
			if enqueued != tt.wantEnqueued {
				t.Errorf("enqueued %d, want %d", enqueued, tt.wantEnqueued)
			}
			if n := w.size(); n != 0 {
				t.Errorf("%d objects left in the log once the cache caught up, want 0", n)
			}
		})
	}
}

// A read older than our last write is stale until the cache shows it (or
// a newer version); a read of another object under the same name is not;
// versions that are not comparable are never stale.
func TestStaleReads(t *testing.T) {
	w := newOwnWrites(func(reconcile.Request) {})
	e := w.begin(objAt("u1", "10"), true)
	w.finish(key, e, "12")
	now := time.Now()
	if stale, n, since := w.stale(objAt("u1", "10"), now); !stale || n != 1 || !since.Equal(now) {
		t.Errorf("read at 10 after our write at 12: stale %v, deferrals %d, since %v; want stale, 1, now", stale, n, since)
	}
	if stale, n, since := w.stale(objAt("u1", "11"), now.Add(time.Second)); !stale || n != 2 || !since.Equal(now) {
		t.Errorf("read at 11: stale %v, deferrals %d, since %v; want stale, 2, the first deferral's time", stale, n, since)
	}
	if stale, _, _ := w.stale(objAt("u1", "x"), now); stale {
		t.Error("a version that is not an integer is stale; want fail open")
	}
	if stale, _, _ := w.stale(objAt("u1", "12"), now); stale {
		t.Error("a read at our write's version is stale")
	}
	if n := w.size(); n != 0 {
		t.Errorf("%d objects left after the cache caught up, want 0", n)
	}

	e = w.begin(objAt("u1", "12"), false)
	w.finish(key, e, "20")
	if stale, _, _ := w.stale(objAt("u2", "15"), now); stale {
		t.Error("another object under the same name is stale")
	}

	e = w.begin(objAt("u1", "12"), false)
	w.finish(key, e, "20")
	w.giveUp(key)
	if stale, _, _ := w.stale(objAt("u1", "15"), now); stale {
		t.Error("stale after giveUp")
	}
	w.forget(key)
	if n := w.size(); n != 0 {
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

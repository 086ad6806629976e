package apply_test

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
)

// The records stay within the cap, least recently applied dropped first, and
// an object is forgotten on Forget. One the cache says is gone is not
// forgotten (the cache may lag behind our own creation of it, see
// TestCacheLagAfterOwnCreate), and its next apply creates it.
func TestMemoryIsBoundedAndFreed(t *testing.T) {
	ns := cluster.Namespace(t)
	informers := startCache(t)
	a, requests := newApplier(t, apply.WithCache(informers), apply.WithMaxRecords(3))
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		res, err := a.Apply(t.Context(), configMapAC(ns, n, nil))
		if err != nil {
			t.Fatal(err)
		}
		waitCached(t, informers, cmKey(ns, n), res.Object().GetResourceVersion())
	}
	if got := apply.Remembered(a); got != 3 {
		t.Errorf("remembers %d objects, want the cap of 3", got)
	}
	for _, tt := range []struct {
		name     string
		requests int64
	}{{"e", 0}, {"a", 1}} { // e is remembered; a was dropped first
		before := requests.all.Load()
		res, err := a.Apply(t.Context(), configMapAC(ns, tt.name, nil))
		if err != nil || res.Outcome != apply.Unchanged || requests.all.Load()-before != tt.requests {
			t.Errorf("re-apply %s = %s with %d requests, %v; want Unchanged with %d", tt.name, res.Outcome, requests.all.Load()-before, err, tt.requests)
		}
	}
	// Remembered now: a, e, d.

	t.Run("cache says NotFound", func(t *testing.T) {
		gone := cmKey(ns, "d")
		if err := cluster.Client().Delete(t.Context(), gone); err != nil {
			t.Fatal(err)
		}
		waitGone(t, informers, gone)
		if _, err := a.Apply(t.Context(), configMapAC(ns, "d", nil), client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		if got := apply.Remembered(a); got != 3 {
			t.Errorf("remembers %d after the cache lost d, want 3", got)
		}
		res, err := a.Apply(t.Context(), configMapAC(ns, "d", nil))
		if err != nil || res.Outcome != apply.Created {
			t.Errorf("re-apply after delete = %s, %v; want Created", res.Outcome, err)
		}
	})
	t.Run("Forget", func(t *testing.T) {
		before := apply.Remembered(a)
		a.Forget(cmKey(ns, "a"))
		if got := apply.Remembered(a); got != before-1 {
			t.Errorf("remembers %d after Forget, want %d", got, before-1)
		}
	})
}

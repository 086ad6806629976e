package apply

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kopgo/kopgo/internal/recency"
)

// names lists the records' resourceVersions (the tests put each key's
// name there) from the most to the least recently used, checking that the
// links and the map agree.
func (r *records) names(t *testing.T) []string {
	t.Helper()
	var out []string
	for e := r.order.Oldest(); e != nil; e = recency.Newer(e) {
		out = append(out, e.rec.resourceVersion)
	}
	slices.Reverse(out)
	if len(out) != len(r.items) {
		t.Fatalf("%d linked, %d in the map", len(out), len(r.items))
	}
	return out
}

// The records evict the least recently used, and get, put and forget keep
// the recency list and the map in step wherever the entry sits.
func TestRecordsLRU(t *testing.T) {
	key := func(n string) recordKey { return recordKey{namespace: "ns", name: n} }
	r := newRecords(3)
	for _, n := range []string{"a", "b", "c"} {
		r.put(key(n), record{resourceVersion: n})
	}
	if got := r.names(t); !slices.Equal(got, []string{"c", "b", "a"}) {
		t.Fatalf("order %v", got)
	}
	if rec, ok := r.get(key("a")); !ok || rec.resourceVersion != "a" {
		t.Fatalf("get a = %+v, %t", rec, ok)
	}
	r.put(key("d"), record{resourceVersion: "d"}) // evicts b, the least recently used
	if got := r.names(t); !slices.Equal(got, []string{"d", "a", "c"}) {
		t.Fatalf("after evicting: %v, want d a c", got)
	}
	if _, ok := r.get(key("b")); ok {
		t.Error("b survived eviction")
	}
	r.put(key("c"), record{resourceVersion: "c"}) // update moves to front
	if got := r.names(t); !slices.Equal(got, []string{"c", "d", "a"}) {
		t.Errorf("after updating c: %v, want c d a", got)
	}
	for _, n := range []string{"a", "c", "d", "x"} { // middle, head, last, absent
		r.forget(key(n))
		r.names(t)
	}
	if r.len() != 0 || r.order.Oldest() != nil {
		t.Errorf("not empty after forgetting all: %d, oldest %v", r.len(), r.order.Oldest())
	}
	for i := range 10 {
		r.put(key(fmt.Sprint(i)), record{resourceVersion: fmt.Sprint(i)})
	}
	if got := r.names(t); !slices.Equal(got, []string{"9", "8", "7"}) {
		t.Errorf("after 10 puts: %v", got)
	}
}

// UIDs the API server makes are kept as their 16 bytes; other forms by a
// digest, never equal to another string's.
func TestUIDOf(t *testing.T) {
	const u = "6a1c3f0e-12ab-4cde-8f01-23456789abcd"
	got := uidOf(u)
	want := uid{0x6a, 0x1c, 0x3f, 0x0e, 0x12, 0xab, 0x4c, 0xde, 0x8f, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd}
	if got != want {
		t.Errorf("uidOf(%s) = %x, want %x", u, got, want)
	}
	if uidOf("") != (uid{}) {
		t.Error("the empty UID is not the zero uid")
	}
	distinct := []types.UID{u, "6A1C3F0E-12AB-4CDE-8F01-23456789ABCD", "6a1c3f0e12ab4cde8f0123456789abcd", "u1", "u2", "6a1c3f0e-12ab-4cde-8f01-23456789abcx"}
	seen := map[uid]types.UID{}
	for _, s := range distinct {
		if prev, ok := seen[uidOf(s)]; ok {
			t.Errorf("uidOf(%q) == uidOf(%q)", s, prev)
		}
		seen[uidOf(s)] = s
	}
}

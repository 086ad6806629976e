package apply

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kopgo/kopgo/internal/recency"
)

// order lists the keys' names from the most to the least recently used,
// checking that the links and the map agree.
func (r *records) names(t *testing.T) []string {
	t.Helper()
	var out []string
	for e := r.order.Oldest(); e != nil; e = recency.Newer(e) {
		out = append(out, e.key.name)
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
	r.put(key("d"), record{}) // evicts b, the least recently used
	if got := r.names(t); !slices.Equal(got, []string{"d", "a", "c"}) {
		t.Fatalf("after evicting: %v, want d a c", got)
	}
	if _, ok := r.get(key("b")); ok {
		t.Error("b survived eviction")
	}
	r.put(key("c"), record{resourceVersion: "c2"}) // update moves to front
	if rec, _ := r.get(key("c")); rec.resourceVersion != "c2" {
		t.Errorf("updated record %+v", rec)
	}
	for _, n := range []string{"a", "c", "d", "x"} { // middle, head, last, absent
		r.forget(key(n))
		r.names(t)
	}
	if r.len() != 0 || r.order.Oldest() != nil {
		t.Errorf("not empty after forgetting all: %d, oldest %v", r.len(), r.order.Oldest())
	}
	for i := range 10 {
		r.put(key(fmt.Sprint(i)), record{})
	}
	if got := r.names(t); !slices.Equal(got, []string{"9", "8", "7"}) {
		t.Errorf("after 10 puts: %v", got)
	}
}

package apply

import (
	"fmt"
	"slices"
	"testing"
)

// order lists the keys' names from the most to the least recently used,
// walking the links both ways and checking they agree with the map.
func (r *records) order(t *testing.T) []string {
	t.Helper()
	var fwd, back []string
	for e := r.head; e != nil; e = e.next {
		fwd = append(fwd, e.key.name)
	}
	for e := r.tail; e != nil; e = e.prev {
		back = append(back, e.key.name)
	}
	slices.Reverse(back)
	if !slices.Equal(fwd, back) || len(fwd) != len(r.items) {
		t.Fatalf("links disagree: forward %v, backward %v, %d in the map", fwd, back, len(r.items))
	}
	return fwd
}

// The records evict the least recently used, and get, put and forget keep
// the recency list and the map in step wherever the entry sits.
func TestRecordsLRU(t *testing.T) {
	key := func(n string) recordKey { return recordKey{namespace: "ns", name: n} }
	r := newRecords(3)
	for _, n := range []string{"a", "b", "c"} {
		r.put(key(n), record{resourceVersion: n})
	}
	if got := r.order(t); !slices.Equal(got, []string{"c", "b", "a"}) {
		t.Fatalf("order %v", got)
	}
	if rec, ok := r.get(key("a")); !ok || rec.resourceVersion != "a" {
		t.Fatalf("get a = %+v, %t", rec, ok)
	}
	r.put(key("d"), record{}) // evicts b, the least recently used
	if got := r.order(t); !slices.Equal(got, []string{"d", "a", "c"}) {
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
		r.order(t)
	}
	if r.len() != 0 || r.head != nil || r.tail != nil {
		t.Errorf("not empty after forgetting all: %d, head %v, tail %v", r.len(), r.head, r.tail)
	}
	for i := range 10 {
		r.put(key(fmt.Sprint(i)), record{})
	}
	if got := r.order(t); !slices.Equal(got, []string{"9", "8", "7"}) {
		t.Errorf("after 10 puts: %v", got)
	}
}

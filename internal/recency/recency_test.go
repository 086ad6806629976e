package recency_test

import (
	"slices"
	"testing"

	"github.com/kopgo/kopgo/internal/recency"
)

type item struct {
	name  string
	links recency.Links[*item]
}

func (i *item) RecencyLinks() *recency.Links[*item] { return &i.links }

// order lists the names from the oldest to the newest.
func order(l *recency.List[*item]) []string {
	var out []string
	for e := l.Oldest(); e != nil; e = recency.Newer(e) {
		out = append(out, e.name)
	}
	return out
}

// Touch moves an element to the newest end wherever it is; Remove takes
// out the oldest, the newest, one in the middle, or none (an element not
// in the list), and keeps both ends right.
func TestList(t *testing.T) {
	var l recency.List[*item]
	a, b, c, d := &item{name: "a"}, &item{name: "b"}, &item{name: "c"}, &item{name: "d"}
	for _, e := range []*item{a, b, c} {
		l.Touch(e)
	}
	check := func(want ...string) {
		t.Helper()
		if got := order(&l); !slices.Equal(got, want) {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
	check("a", "b", "c")
	l.Touch(a) // the oldest
	check("b", "c", "a")
	l.Touch(c) // the middle
	check("b", "a", "c")
	l.Touch(c) // the newest already
	check("b", "a", "c")
	l.Remove(d) // not in the list
	check("b", "a", "c")
	l.Remove(a) // the middle
	check("b", "c")
	l.Remove(c) // the newest
	check("b")
	l.Touch(d)
	l.Remove(b) // the oldest
	check("d")
	l.Remove(d)
	check()
	if l.Oldest() != nil {
		t.Error("an empty list has an oldest element")
	}
	l.Touch(a) // removed elements can come back
	check("a")
}

package status

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestWriteLogIsBounded(t *testing.T) {
	l := newWriteLog(3)
	for i := range 5 {
		l.put(lastWrite{uid: types.UID(fmt.Sprint(i)), resourceVersion: fmt.Sprint(i)})
	}
	if n := l.len(); n != 3 {
		t.Errorf("%d entries, want 3", n)
	}
	for i, want := range []bool{false, false, true, true, true} {
		if _, ok := l.get(types.UID(fmt.Sprint(i))); ok != want {
			t.Errorf("entry %d kept %t, want %t", i, ok, want)
		}
	}
	// Rewriting an entry makes it the most recent.
	l.put(lastWrite{uid: "2", resourceVersion: "new"})
	l.put(lastWrite{uid: "5"})
	if got, ok := l.get("2"); !ok || got.resourceVersion != "new" {
		t.Errorf("entry 2 = %+v, %t; want kept with the new resourceVersion", got, ok)
	}
	if _, ok := l.get("3"); ok {
		t.Error("entry 3, the least recently written, was kept")
	}
	l.forget("2")
	if _, ok := l.get("2"); ok || l.len() != 2 {
		t.Errorf("after forget: %d entries", l.len())
	}
}

package watch

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCoalescerKeepsLatestPerKeyInFirstSeenOrder(t *testing.T) {
	q := newCoalescer[int]()
	for i := range 1000 {
		q.push(fmt.Sprint(i%3), i)
	}
	q.push("x", -1)
	q.forget("x")
	q.forget("missing")
	if got := q.len(); got != 3 {
		t.Fatalf("%d pending after 1000 pushes to 3 keys, want 3", got)
	}
	var got []int
	for v, ok := q.pop(); ok; v, ok = q.pop() {
		got = append(got, v)
	}
	if diff := cmp.Diff([]int{999, 997, 998}, got); diff != "" {
		t.Errorf("popped (-want +got):\n%s", diff)
	}
	select {
	case <-q.ready:
	default:
		t.Error("push did not signal readiness")
	}
}

package loop

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
	"time"
)

// goroutineID is the number in runtime.Stack's first line.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return string(bytes.Fields(buf)[1])
}

// Calls one after the other run on one worker; a call that blocks does not
// hold up another; an idle worker ends.
func TestWorkers(t *testing.T) {
	w := newWorkers()
	w.idle = 200 * time.Millisecond
	run := func(f func()) {
		done := make(chan struct{})
		w.do(func() { f(); close(done) })
		<-done
	}
	var first, second string
	run(func() { first = goroutineID() })
	time.Sleep(10 * time.Millisecond) // the worker is back in its select
	run(func() { second = goroutineID() })
	if first != second {
		t.Errorf("two calls in a row ran on goroutines %s and %s, want one worker", first, second)
	}

	block := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	w.do(func() { defer wg.Done(); <-block })
	ran := make(chan struct{})
	w.do(func() { close(ran) })
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("a call waited behind a blocked one")
	}
	close(block)
	wg.Wait()

	before := runtime.NumGoroutine()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() >= before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if runtime.NumGoroutine() >= before {
		t.Errorf("%d goroutines %s after the calls, want fewer: idle workers end", runtime.NumGoroutine(), w.idle)
	}
}

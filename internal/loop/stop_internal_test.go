package loop

import "testing"

// Stopping waits for the reconciles in flight, and lets no new one start:
// the Forgetter drops the health entries only after the last one recorded
// its own.
func TestInflightStopWaitsForReconcilesInFlight(t *testing.T) {
	var f inflight
	for range 2 {
		if !f.enter() {
			t.Fatal("a reconcile could not start before the stop")
		}
	}
	idle := f.stop()
	if f.enter() {
		t.Error("a reconcile started after the stop")
	}
	f.leave()
	select {
	case <-idle:
		t.Fatal("idle with one reconcile still in flight")
	default:
	}
	f.leave()
	select {
	case <-idle:
	default:
		t.Fatal("not idle once the last reconcile left")
	}
	var quiet inflight
	select {
	case <-quiet.stop():
	default:
		t.Error("a stop with nothing in flight does not return at once")
	}
}

package testkit

import (
	"context"
	"testing"
	"time"
)

// Eventually calls cond until it returns nil, and fails tb (tb.Fatalf) with
// what and cond's last error once timeout has passed: the way a test waits
// for a controller to reach a state. cond gets the test's context (not
// one that ends at the timeout, so that its last error says why the state
// was not reached). It polls every 20 ms for the first second, then every
// 100 ms, so a state reached at once costs the test milliseconds.
//
// timeout bounds a stuck test; it is not a timing assertion: pick one a
// loaded CI machine meets many times over (tens of seconds).
//
//	testkit.Eventually(t, 30*time.Second, "Ready", func(ctx context.Context) error {
//		if err := c.Get(ctx, key, &app); err != nil {
//			return err
//		}
//		if !status.IsTrue(&app, status.Ready) {
//			return fmt.Errorf("conditions %v", app.Status.Conditions)
//		}
//		return nil
//	})
func Eventually(tb testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	tb.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		err := cond(tb.Context())
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not reached within %s: %v", what, timeout, err)
		}
		pause := 100 * time.Millisecond
		if time.Since(start) < time.Second {
			pause = 20 * time.Millisecond
		}
		select {
		case <-tb.Context().Done():
			tb.Fatalf("%s: the test ended while waiting: %v", what, err)
		case <-time.After(pause):
		}
	}
}

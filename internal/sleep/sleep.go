// Package sleep waits for a while unless a context ends first, shared by the
// loops that retry or poll (finalizers, resources).
package sleep

import (
	"context"
	"time"
)

// For sleeps for d, or until ctx ends: it returns ctx's error then, nil
// after a full sleep. With d <= 0 it only reports whether ctx has ended.
func For(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

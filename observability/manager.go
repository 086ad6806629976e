package observability

import "context"

// managerHook ties a recorder to the manager it was made from, as a
// manager Runnable: when the manager stops, every pending count is
// written, within flushTimeout, and every later event (reconciles still
// draining record some) is written at once. Nothing outlives the manager:
// the worker ends once nothing is left to write, so a recorder whose
// caller never calls Shutdown (a controller added to a manager with
// Builder.Setup) keeps neither a goroutine nor, through its client, the
// stopped manager's cache alive.
type managerHook struct{ r *EventRecorder }

// Start waits for the manager to stop, then flushes.
func (h managerHook) Start(ctx context.Context) error {
	<-ctx.Done()
	flushCtx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	h.r.flush(flushCtx)
	return nil
}

// NeedLeaderElection reports false: every replica records events.
func (managerHook) NeedLeaderElection() bool { return false }

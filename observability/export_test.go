package observability

import "time"

// SetSeriesInterval sets how often repeating events' counts are written,
// for the tests of the external test package, and returns the restore.
func SetSeriesInterval(d time.Duration) (restore func()) {
	old := seriesInterval
	seriesInterval = d
	return func() { seriesInterval = old }
}

// SetStopAfter sets how long after its manager stopped a recorder shuts
// itself down, and returns the restore.
func SetStopAfter(d time.Duration) (restore func()) {
	old := stopAfter.Swap(int64(d))
	return func() { stopAfter.Store(old) }
}

// WorkerDone is closed when r's worker has ended.
func WorkerDone(r *EventRecorder) <-chan struct{} { return r.done }

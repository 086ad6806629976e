package observability

import "time"

// SetSeriesInterval sets how often repeating events' counts are written,
// for the tests of the external test package, and returns the restore.
func SetSeriesInterval(d time.Duration) (restore func()) {
	old := seriesInterval
	seriesInterval = d
	return func() { seriesInterval = old }
}

// WorkerRunning reports whether r's worker runs.
func WorkerRunning(r *EventRecorder) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.worker != nil
}

// SetHealthClock makes m's object-health gauges read the time from now.
func SetHealthClock(m *Metrics, now func() time.Time) {
	m.health.mu.Lock()
	defer m.health.mu.Unlock()
	m.health.now = now
}

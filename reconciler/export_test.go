package reconciler

// WithMetrics lets the package's external tests record reconciles in a
// registry of their own.
var WithMetrics = withMetrics

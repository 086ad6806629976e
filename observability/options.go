package observability

import (
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
)

// RecorderOption configures an [EventRecorder] when it is made.
type RecorderOption func(*recorderOptions)

type recorderOptions struct {
	instance string
	scheme   *runtime.Scheme
	log      logr.Logger
}

// WithReportingInstance sets the events' reportingInstance, which names
// the replica that reports (at most 128 bytes). By default it is the
// reporting controller's name, a dash and the host name (a pod's name),
// cut to 128 bytes.
func WithReportingInstance(instance string) RecorderOption {
	return func(o *recorderOptions) { o.instance = instance }
}

// WithScheme sets the scheme that maps the Go types of the objects
// events are about to their kinds. By default: the manager's scheme for
// [NewRecorder], client-go's (the built-in kinds) for
// [NewRecorderForConfig].
func WithScheme(scheme *runtime.Scheme) RecorderOption {
	return func(o *recorderOptions) { o.scheme = scheme }
}

// WithLogger sets where the recorder logs the events the API server
// refuses. By default: the manager's logger, named "events", for
// [NewRecorder]; nothing for [NewRecorderForConfig].
func WithLogger(log logr.Logger) RecorderOption {
	return func(o *recorderOptions) { o.log = log }
}

// Tuning of the EventRecorder; variables so that tests can shorten them.
var (
	// seriesInterval is how often the count of a repeating event is
	// written: at most once per interval per series, and when the manager
	// stops or the recorder shuts down.
	seriesInterval = 30 * time.Second
	// seriesExpiry is how long a series stays open after its last repeat;
	// a later repeat starts a new Event (client-go's broadcaster uses 6
	// minutes too).
	seriesExpiry = 6 * time.Minute
)

const (
	// queueLength bounds the writes waiting to be sent; a series whose
	// write finds the queue full is sent at the next interval instead.
	queueLength = 1000
	// maxSeries bounds the series remembered for folding repeats (notes
	// with varying details make many); beyond it the least recently seen
	// is forgotten.
	maxSeries = 4096
	// writeTimeout bounds one request to the API server.
	writeTimeout = 10 * time.Second
	// maxAttempts is how often a series is tried, once per interval, when
	// the API server does not answer, before it is given up.
	maxAttempts = 12
	// flushTimeout bounds the flush when the manager stops: event counts
	// must not eat the graceful-shutdown window that draining reconciles
	// need (with writes slowed to a second each, a 10 s flush took most of
	// a 25 s window). A healthy API server takes a few hundred writes in it.
	flushTimeout = 2 * time.Second
	// maxInstanceBytes is the API's limit on reportingInstance.
	maxInstanceBytes = 128
)

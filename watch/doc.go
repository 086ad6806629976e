// Package watch turns a Kubernetes watch into a Go channel that survives the
// API server going away, never blocks the informer behind it, and closes when
// its context ends.
//
// Three shapes, with the same signature (a kind as type parameter, a client
// that can watch, a [scope.Scope], and controller-runtime's list options):
//
//	// Cheapest: a value on every add, change or delete, coalesced.
//	changed, err := watch.Signal[*corev1.ConfigMap](ctx, c, scope.Namespaced("shop"))
//
//	// The object on every add or change.
//	objs, err := watch.Objects[*appsv1.Deployment](ctx, c, scope.AllNamespaces, client.MatchingLabels{"app": "web"})
//
//	// Applied and Deleted events.
//	events, err := watch.Events[*corev1.Node](ctx, c, scope.Cluster)
//	for ev := range events {
//		switch ev.Type {
//		case watch.Applied: ...
//		case watch.Deleted: ...
//		}
//	}
//
// c is a controller-runtime client.WithWatch (client.NewWithWatch). The scope
// is checked against the RESTMapper first: a wrong one is an Invalid error
// and nothing is started.
//
// The options select on the server: client.MatchingLabels,
// client.MatchingLabelsSelector, client.HasLabels, client.MatchingFields and
// client.MatchingFieldsSelector. Only their selectors are used: the scope
// says the namespace (a client.InNamespace is ignored), and the informer
// pages and resumes on its own (client.Limit and client.Continue are
// ignored).
//
// # Disconnects and re-lists
//
// Each watch runs a client-go informer. When the API server goes away the
// informer retries with backoff; when it comes back the informer resumes or,
// after 410 Gone, lists again and compares with what it had: objects seen
// again arrive as Applied, objects that vanished meanwhile as Deleted. The
// stream therefore converges on the server's state (tested by restarting the
// API server mid-stream). Interruptions are logged at V(1) through the logr
// logger in the context.
//
// # Slow consumers
//
// The informer's handlers never wait for the consumer. Between them sits a
// buffer that keeps at most one pending value per object (and, for Signal,
// one value in all): a newer state replaces the older one in place and keeps
// its place in line. So a consumer that falls behind sees the latest state of
// every object that changed, in the order they first changed, and never a
// stale state after a newer one; memory grows with the number of objects, not
// with the rate of change. Objects drops a pending object that is deleted;
// Events delivers the deletion instead.
//
// # Memory
//
// The informer caches every object in scope (it needs them to compare after
// a re-list), so narrow the scope and use label selectors; see
// BenchmarkEventsDelivery for the measured bytes per cached object.
//
// # Shutdown
//
// When ctx ends the informer stops, and only then the channel closes: no
// goroutine outlives it (checked with goleak).
package watch

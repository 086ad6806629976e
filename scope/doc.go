// Package scope says, at the call site, where an operation on Kubernetes
// objects acts: [Namespaced] for one namespace, [Cluster] for cluster-scoped
// kinds, [AllNamespaces] for a namespaced kind everywhere.
//
//	resources.List(ctx, c, scope.Namespaced("team-a"), &cms)
//	resources.List(ctx, c, scope.Cluster, &nodes)
//	resources.List(ctx, c, scope.AllNamespaces, &deployments)
//
// # Checked against the RESTMapper
//
// Kubernetes decides whether a kind is namespaced, not the caller. A wrong
// guess otherwise shows up late and obscurely: a namespace silently ignored,
// a 404 for a path that cannot exist. [Scope.Check] asks the RESTMapper and
// fails before any request, naming the kind and what to use instead:
//
//	scope Cluster given for namespaced kind apps/v1, Kind=Deployment: use scope.Namespaced(ns) or scope.AllNamespaces
//
// Errors are koperrors of Kind Invalid, so callers can branch on
// koperrors.IsInvalid.
//
// # A value, not an interface
//
// Scope is a small comparable struct rather than an interface: it cannot be
// nil, it works as a map key and with ==, and passing it costs nothing. Its
// zero value is "unset", which [Scope.Validate] and [Scope.Check] reject, so a
// forgotten scope is an error, never "everywhere".
package scope

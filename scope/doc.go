// Package scope says, at the call site, where an operation on Kubernetes
// objects acts: [Namespaced] for one namespace, [Cluster] for cluster-scoped
// kinds, [AllNamespaces] for a namespaced kind everywhere.
//
//	cms, err := resources.List[corev1.ConfigMapList](ctx, c, scope.Namespaced("team-a"))
//	nodes, err := resources.List[corev1.NodeList](ctx, c, scope.Cluster)
//	deploys, err := resources.List[appsv1.DeploymentList](ctx, c, scope.AllNamespaces)
//
// # Checked against the RESTMapper
//
// Kubernetes decides whether a kind is namespaced, not the caller. A wrong
// guess otherwise shows up late and obscurely: a namespace silently ignored,
// a 404 for a path that cannot exist. [Scope.Check] asks the RESTMapper and
// fails before any request, naming the kind, its real scope and what to use
// instead:
//
//	scope Cluster given for namespaced kind apps/v1, Kind=Deployment: use scope.Namespaced(ns) or scope.AllNamespaces
//	scope Namespaced("default") given for cluster-scoped kind rbac.authorization.k8s.io/v1, Kind=ClusterRole: use scope.Cluster
//
// [Of] asks the same RESTMapper for the scope an object of a kind has in a
// namespace; with [Scope.ApplyTo] it checks (and defaults) an object's
// namespace against its kind, as gc.Delete and reconciler.Sync do.
//
// Namespaced("") is an error on its own ([Scope.Validate]): an empty
// namespace would mean "every namespace" to a List, which is what
// AllNamespaces is for. So is a namespace that is not a valid namespace name. A kind the RESTMapper does not know is an error that
// names the kind and wraps the mapper's NoKindMatchError.
//
// All these errors are koperrors of Kind Invalid (import
// "github.com/kopgo/kopgo/errors" as koperrors), so callers can branch on
// koperrors.KindOf(err) == koperrors.Invalid; a RESTMapper that fails for another reason (discovery
// unavailable) keeps that error's Kind.
//
// # Using a scope
//
// [Scope.Namespace] reads it; [Scope.ListOptions] turns it into
// controller-runtime list options; [Scope.ApplyTo] puts an object in it,
// refusing to move an object that already names another namespace.
//
// # A value, not an interface
//
// Scope is a small comparable struct rather than an interface: it cannot be
// nil, it works as a map key and with ==, and passing it costs nothing. Its
// zero value is "unset", which [Scope.Validate] and [Scope.Check] reject, so a
// forgotten scope is an error, never "everywhere". An interface with an
// unexported method would also close the set, but would bring a nil value
// and allocation for Namespaced(ns) with nothing gained.
package scope

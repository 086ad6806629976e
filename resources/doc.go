// Package resources holds the everyday operations on Kubernetes objects,
// koprs' resources module for Go: get, find, list, list names, poll, patch
// labels and annotations, ensure a namespace. Deleting is the gc package's
// job: gc.Delete deletes one object by name as well as many. Each operation
// that addresses objects takes a [scope.Scope] and checks it against the
// kind before sending anything, and every error names the operation and the
// object ("get ConfigMap shop/old: ...") and carries a [koperrors.Kind].
//
//	cm, err := resources.Get[corev1.ConfigMap](ctx, c, scope.Namespaced("shop"), "settings")
//	ns, found, err := resources.Find[corev1.Namespace](ctx, c, scope.Cluster, "team-a")
//	deps, err := resources.List[appsv1.DeploymentList](ctx, c, scope.AllNamespaces, client.MatchingLabels{"app": "web"})
//	keys, err := resources.Keys(ctx, c, scope.Namespaced("shop"), corev1.SchemeGroupVersion.WithKind("Secret"))
//	web, err := resources.Poll(ctx, c, scope.Namespaced("shop"), "web", func(d *appsv1.Deployment) (bool, error) { ... })
//	pod, err := resources.PollAny(ctx, c, scope.Namespaced("shop"), func(p *corev1.Pod) (bool, error) { ... }, client.MatchingLabels{"app": "web"})
//	_, err = resources.PollUntilGone[corev1.ConfigMap](ctx, c, scope.Namespaced("shop"), "old")
//	changed, err := resources.SetLabels(ctx, c, cm, map[string]string{"tier": "web"})
//	created, err := resources.EnsureNamespace(ctx, c, "shop", nil)
//
// # Generic without reflection
//
// [Get], [Find], [List], [Poll], [PollAny] and [PollUntilGone] are generic
// over the struct type T with a second type parameter P constrained to
// "*T and client.Object" ([Object], [ObjectList]). Go infers P, so a call
// names T alone, and a fresh object is P(new(T)): an allocation, no
// reflection, on every call and every poll. A constructor built with
// reflect would cost reflection and a setup step; taking an object to fill
// (controller-runtime's style) reads worse at the call site, and leaves
// Find's "not found" as a half-filled variable of the caller's. The price:
// kinds without a Go type have no T. For them (unstructured.Unstructured,
// metav1.PartialObjectMetadata, with apiVersion and kind set)
// [GetInto] and [ListInto] take the object to fill.
//
// # Scopes
//
// A scope that does not fit the kind, as scope.Cluster for a ConfigMap, an
// unset scope, scope.Namespaced(""), or scope.AllNamespaces where one object
// is addressed, is an error of Kind Invalid and sends no request
// ([scope.Scope.Check] answers from the RESTMapper's discovery cache). The
// client must therefore provide its scheme and RESTMapper ([Reader]):
// client.Client and a manager's cached client do. The label and
// annotation patches take a client.Writer and no scope: they act on an
// object the caller already holds.
//
// # Options
//
// List takes controller-runtime's own per-call list options
// (client.MatchingLabels for a map, client.MatchingLabelsSelector for a
// labels.Selector, client.MatchingFields, client.Limit...): every
// controller-runtime user knows them and wrapping them would add nothing.
// The scope is the one place the namespace is said: it overrides a
// client.InNamespace among the options. [PollAny] takes them too, with
// [Interval] among them. Poll and PollUntilGone have their own options
// ([PollOption]: [Interval], [AllowNotFound], [ForUID]), in the same
// one-method style, because they have no client counterpart.
//
// # Requests
//
// Measured against a real API server with a counting RoundTripper, after
// discovery: Get, Find, List, Keys and EnsureNamespace (created or not)
// send one request each; a scope mistake, and a label or annotation change
// already in place, send none. [Keys] lists metadata only: three ConfigMaps
// with 4 KiB of data each cost 838 response bytes, where a full List costs
// 13147. Poll, PollAny (a list) and PollUntilGone send one read per interval (DefaultPollInterval, 250ms,
// plus up to 20% jitter).
//
// # Deadlines
//
// [Poll], [PollAny] and [PollUntilGone] run until the context ends: give it
// a deadline.
// At the deadline they return the last object read and an error of Kind
// Timeout that names the object and what was last seen ("poll Deployment
// shop/web: context deadline exceeded; last seen resourceVersion 812,
// generation 3"; for PollUntilGone also its deletionTimestamp and
// finalizers, which are what hold it). A cancelled context is not a
// timeout: the error keeps context.Canceled's kind.
//
// # Conflicts
//
// [SetLabels], [RemoveLabels], [SetAnnotations] and [RemoveAnnotations]
// send a JSON merge patch of just the keys that change (null removes a key)
// and no resourceVersion, so a concurrent writer of the spec or of other
// labels never makes them fail, and they never drop what others wrote.
package resources

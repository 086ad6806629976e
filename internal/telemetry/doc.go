// Package telemetry holds the OpenTelemetry spans kopgo's own packages
// (apply, gc, finalizers, reconciler, controller) open. Users set a
// TracerProvider on the Builder; nothing here is for them.
//
// The Prometheus collectors are observability.Metrics, a public type with
// its own recording methods: kopgo's packages and users' reconcilers
// record through the same API. [Metrics] and [Result] are aliases of the
// public types, kept so that code written against their former internal
// definitions still compiles; new code uses observability's names.
//
// # Span attributes
//
// OpenTelemetry's semantic conventions define k8s.* attributes only for
// particular kinds (k8s.pod.name, k8s.deployment.uid, ...), as resource
// attributes: they say where telemetry comes from, as k8s.namespace.name
// names the namespace of the operator's own pod. They define none for an
// arbitrary object (open-telemetry/semantic-conventions#430), and names
// under k8s.* belong to the conventions. So the object a span is about is
// named under kopgo's own namespace, and k8s.namespace.name is left to the
// operator's Resource:
//
//	kopgo.controller          controller name
//	kopgo.object.kind         Kind of the object (reconciled, applied, collected)
//	kopgo.object.namespace    its namespace (empty for a cluster-scoped object)
//	kopgo.object.name         its name
//	kopgo.object.uid          its UID (reconcile spans)
//	kopgo.object.generation   its metadata.generation (reconcile spans)
//	kopgo.result              the reconcile's Result
package telemetry

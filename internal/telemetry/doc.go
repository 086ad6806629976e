// Package telemetry is the plumbing behind kopgo's public observability
// package: the Prometheus collectors and how kopgo's own packages (apply,
// gc, finalizers, reconciler, controller) record into them, and the
// OpenTelemetry spans they open. Users create and register metrics through
// observability.NewMetrics and set a TracerProvider on the Builder; nothing
// here is for them.
//
// # Label values
//
// Every metric label value is lower case, from a closed set: reconcile
// results ([Result]), apply outcomes (created, updated, unchanged), and error
// kinds as lower snake_case of koperrors.Kind's name (NotFound becomes
// not_found, IO io), never an error message.
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

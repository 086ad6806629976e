// Package apply is server-side apply that says what it did (Created,
// Updated or Unchanged) and sends nothing when nothing would change.
//
//	a, err := apply.New(mgr.GetConfig(), "webapp-controller",
//		apply.WithScheme(mgr.GetScheme()), apply.WithCache(mgr.GetCache()))
//
//	res, err := a.Apply(ctx, appsv1ac.Deployment("web", ns).WithSpec(...))
//	res.Outcome // apply.Created, apply.Updated or apply.Unchanged
//
// Every apply names its field owner; Force and DryRun are per-call options.
//
// # Inputs
//
//   - A client-go apply configuration: exactly the fields set are sent and
//     owned. The recommended form.
//   - An *unstructured.Unstructured authored as partial intent: the same.
//   - A typed object (*appsv1.Deployment): convenient, with one caveat. Its
//     unstructured form is pruned of status, of server-set metadata
//     (creationTimestamp, resourceVersion, uid, managedFields, ...), of
//     nulls, and of the empty objects Go's non-pointer structs produce
//     (strategy: {}, resources: {}), so a nil spec.replicas stays unowned and
//     an HPA's replicas survive every apply. What remains owned is every
//     non-empty field, including zero values of fields without omitempty.
//     Prefer apply configurations where that matters.
//
// # Outcome without a GET
//
// The API server answers an apply that creates with 201 and one to an
// existing object with 200; the Applier builds its own client whose
// transport records that status, so Created is exact. Updated or Unchanged
// compares the resourceVersion returned with the versions known before the
// request: the cache's and the one this Applier got from its previous apply
// of the object. If neither is known (the first apply to an existing object
// since start without a cache), the result is reported Updated.
//
// # Zero requests for an unchanged object
//
// The Applier remembers, per object, the UID, the resourceVersion the server
// returned and a hash of the intent it sent. When the same intent is applied
// again and the cache (WithCache; a manager's cache costs no request) still
// holds that UID and resourceVersion, nobody changed the object since, so
// nothing is sent: Unchanged with Requests == 0. Any change by anyone moves
// the resourceVersion and costs exactly one apply. Measured against the real
// API server: create 1 request, update 1, unchanged 0 with a cache and 1
// without. Memory is bounded (WithMaxRecords, default 10000, least recently
// applied forgotten first), and an object the cache no longer has is
// forgotten.
//
// # Errors
//
// Problems visible locally send nothing and are errors of Kind Invalid
// naming the object and the field: no apiVersion/kind, no metadata.name, a
// kind the API server does not serve, no namespace for a namespaced kind or
// one for a cluster-scoped kind. A field-manager conflict is also Invalid,
// not Conflict: retrying cannot fix it; the message names the other manager
// and the field, and Force takes the field over.
package apply

// Package apply is server-side apply that says what it did (Created,
// Updated or Unchanged) and sends nothing when nothing would change. It needs
// no kopgo Builder: an [Applier] works inside any controller-runtime
// reconciler.
//
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Cache: cache.Options{
//		DefaultTransform: apply.KeepManagedFields("webapp-controller")}})
//	a, err := apply.New(mgr.GetConfig(), "webapp-controller", apply.WithCluster(mgr))
//
//	res, err := a.Apply(ctx, appsv1ac.Deployment("web", ns).WithSpec(...))
//	res.Outcome  // apply.Created, apply.Updated or apply.Unchanged
//	res.Object() // the object after the apply
//	res.Requests // 0 or 1
//
// # Options
//
// Per call, [Applier.Apply] takes controller-runtime's client.ApplyOption,
// the options of client.Client's own Apply:
//
//   - The field owner: every apply names its field manager. [New] requires
//     one, the Applier's default; client.FieldOwner names another for one
//     call. kopgo gives the field owner this one way everywhere: a default
//     set where the writer is made (here [New]; a client made with
//     controller-runtime's client.WithFieldOwner for the status and
//     finalizers packages, as kopgo's Builder makes reconciler.Env's), and
//     client.FieldOwner per call.
//   - Force: the Applier does not force field ownership by default: a field
//     another manager owns with another value is a [*ConflictError], so an
//     object someone else created first under the same name is never taken
//     over by accident. [Force](true) (or client.ForceOwnership) takes the
//     fields back where the object is known to be the caller's;
//     reconciler.Sync does so for the children it checked are its own, and
//     status.Patcher.Patch forces by default (a parent's status is its
//     controller's), with Force(false) as its opt-out.
//   - client.DryRunAll: the server validates and answers, nothing is
//     persisted or remembered.
//
// [Interface] is what code that applies needs; [Fake] implements it for unit
// tests without a cluster (see the Fake example).
//
// # Inputs
//
//   - A client-go apply configuration: exactly the fields set are sent and
//     owned. The recommended form.
//   - An *unstructured.Unstructured authored as partial intent: sent as is.
//   - A typed object (*appsv1.Deployment): convenient, with one caveat. Its
//     apiVersion and kind come from the scheme (typed objects usually have an
//     empty TypeMeta), and its unstructured form is pruned of what a Go
//     struct adds by itself: status, server-set metadata (creationTimestamp,
//     resourceVersion, uid, generation, managedFields, ...), null values
//     (nil pointers, maps and slices: a nil spec.replicas stays unowned, so
//     an HPA's replicas survive every apply) and the empty objects of
//     non-pointer structs (strategy: {}, resources: {}, a pod template's
//     creationTimestamp: null).
//
// What a typed object still owns: every non-empty value, and the zero
// values of scalar fields without omitempty (false, 0, "" are
// indistinguishable from "set to zero" once in a struct), as well as an
// explicitly empty map (pruned like a nil one, so not owned). When ownership
// matters field by field, use an apply configuration.
//
// # Outcome without a GET
//
// Created is exact: the API server answers an apply that creates with 201
// and an apply to an existing object with 200 (k8s.io/apiserver's patch
// handler). The Applier builds its own client (on the HTTP client of
// [WithCluster]'s cluster when given, sharing its connections) whose transport records the status
// of each response into a slot carried by the request's context; no
// guessing from timestamps or generation.
//
// Updated or Unchanged after a request compares the resourceVersion the
// server returned with the versions known just before the request: the
// cache's copy (free) and the one this Applier's previous apply of the
// object returned. An equal version proves the apply wrote nothing (every
// write moves the resourceVersion), so Unchanged after a request is exact. A
// moved version is reported Updated. That is exact when no one else wrote the
// object since the version the Applier knows. It over-reports when someone
// did: without a cache, any write by another party since this Applier last
// applied the object (or the first apply of an existing object since start);
// with a cache, a write the cache had not yet received when the apply was
// sent (a Deployment whose status the controller manager updates many times
// a second during a rollout, for one). The Applier cannot tell their write
// from its own and reports Updated. The alternative, a GET before each apply,
// would cost the request this package exists to save. So treat Updated as
// "may have changed" when you act on it (an event, a log line); the
// examples/webapp operator reports a rollout from the Deployment's
// generation instead.
//
// A dry run does not move the resourceVersion; its Updated or Unchanged
// compares the server's answer with the cache's copy at the same version
// (Updated when there is no such copy).
//
// # Zero requests for an unchanged object
//
// With a cache ([WithCluster] or [WithCache]) the Applier sends nothing, and answers
// Unchanged with Requests == 0, when the cache's copy of the object proves
// that the apply would change nothing. Two proofs, the cheap one first:
//
//   - Its own record. The Applier remembers, per object (group, kind,
//     namespace, name), the UID, the resourceVersion the server returned and
//     a hash of the intent (with the field owner and Force). The same intent
//     again, with the cache at that UID and resourceVersion: nobody changed
//     the object since.
//   - The cached object itself, which needs no memory of earlier applies and
//     so holds right after a restart, and after others' writes that left our
//     fields alone. An apply writes nothing when the field owner's Apply
//     entry in the object's managedFields, recorded at the intent's
//     apiVersion, owns exactly the intent's fields (a field the intent no
//     longer sets would be removed; an entry at another apiVersion would be
//     rewritten), and the object holds the intent's value in each of them,
//     lists in the intent's order (list-map items such as containers matched
//     by name, ports by containerPort and protocol, with the schema's key
//     defaults). The field sets and the merge rules are server-side apply's
//     own (sigs.k8s.io/structured-merge-diff), with the schema client-go's
//     apply configurations are generated from. Flux's ssa package asks the
//     server a dry run per object for this decision; the cache already knows.
//     Not used when this Applier last applied another intent at a version
//     the cache does not hold: the cache may lack that write, and its older
//     copy may hold the intent being applied (a revert).
//
// The second proof needs the object's schema, so it covers the Kubernetes
// API's own kinds (those of client-go's apply configurations: Deployment,
// Service, ConfigMap, Secret, ...); it needs managedFields in the cache,
// which [KeepManagedFields] keeps (ours only) as a cache transform; and it is
// conservative: whatever it cannot tell (a custom resource, no entry of ours
// because a transform such as cache.TransformStripManagedFields removed them
// all, an intent outside the schema, one with a resourceVersion or uid
// precondition, a value written another way, "0.5" for "500m") costs one
// apply, never a wrong Unchanged. Custom resources, and every kind when the
// cache strips managedFields, have the first proof only: zero requests for
// the same intent at the same resourceVersion, one after a restart or
// another's write. The record stays because it is much cheaper: an
// unchanged typed Deployment costs some 20µs and 56 allocations by the
// record, some 500µs and 2,400 allocations by the cached object (which
// converts both objects to typed values and walks them; BenchmarkApplyUnchanged
// on a shared 2-core machine), so the first proof keeps the steady state
// cheap and the second saves the request when the first cannot. The schema
// is parsed on the first use of the second proof (about 60ms and 20MB
// allocated, once per process).
//
// Unchanged without a request is as current as the cache, no more. Right
// after someone else's write, before the watch brings it into the cache, the
// Applier still sees the old object and may answer Unchanged while the
// server holds their value (12 of 30 quick re-applies right after another
// manager's change did, in one measurement). The same write reaches the
// cache moments later; its watch event re-runs the reconcile of an owner
// that watches the child (controller-runtime's Owns), and that apply sees the
// write and sends one request that restores our fields. So Unchanged with
// Requests == 0 means "the object held the intent at the cache's
// resourceVersion", and the loop converges; with Requests == 1 it is exact.
//
// [Result.Object] is the server's answer, or, when nothing was sent, the
// cache's copy, converted to unstructured only when called.
//
// Measured against a real kube-apiserver (see the tests and
// BenchmarkApplyUnchanged): create 1 request, update 1, unchanged 0 with a
// cache (after a restart too, for the built-in kinds) and 1 without; bad
// input that can be seen locally 0.
//
// Memory is bounded: at most [WithMaxRecords] objects (default 10,000),
// least recently applied forgotten first. An object is also forgotten when
// the cache says it is gone or holds another UID, and on [Applier.Forget]
// (call it from an informer's DeleteFunc to forget every deleted object at
// once). A forgotten object costs the second proof, or one request, next
// time.
//
// # Errors
//
// Errors are koperrors errors naming the object ("apply Deployment
// default/web: ..."). Problems visible locally send no apply request and are
// of Kind Invalid, naming the field: no apiVersion/kind, no metadata.name, a
// kind the API server does not serve (the RESTMapper may ask discovery), no
// metadata.namespace for a namespaced kind or one for a cluster-scoped kind
// (checked with [scope.Scope.Check]), an empty field owner, an input that is
// not an object.
//
// A field-manager conflict (without force, another manager owns a
// field with another value) is of Kind Invalid, not Conflict, and its chain
// holds a [*ConflictError] listing each field and its manager ([Conflicts]).
// Unlike an optimistic-concurrency 409, which the reconcile loop retries at
// once and silently, retrying cannot help until the other manager lets go:
// force ownership to take the fields over, or stop setting them. Kind
// Invalid makes the loop log it and back off, instead of retrying it
// quietly forever.
package apply

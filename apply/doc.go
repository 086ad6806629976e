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
//	res.Outcome  // apply.Created, apply.Updated or apply.Unchanged (none of them if err != nil)
//	res.Object() // the object after the apply
//	res.Requests // 0 or 1 (see below for the exceptions)
//
// Without a manager (a CLI, a job, a test), [New] takes the rest.Config
// alone, and [WithScheme] the types of your custom resources.
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
//   - [AdoptOrphans](true): an apply whose intent carries a controller
//     reference may take over an existing object that no controller
//     controls (see Ownership below).
//   - client.DryRunAll: the server validates and answers, nothing is
//     persisted or remembered.
//
// [Interface] is what code that applies needs; [Fake] implements it for unit
// tests without a cluster (see the Fake example).
//
// # Ownership: never a takeover
//
// A controller reference (an owner reference with controller: true) makes
// an object its owner's: Kubernetes' garbage collector deletes it with the
// owner. So an apply whose intent carries one never takes over an object
// the Applier did not create. When the object of that name exists and is
// controlled by another owner, the apply is refused with a
// [*TakeoverError] (Kind Invalid), with or without [AdoptOrphans]; when no
// controller controls it (an orphan: created by hand, by another tool, or
// left by an orphaning delete), it is refused unless the apply passes
// AdoptOrphans(true). The controller reference is the only proof of whose
// an object is: one the Applier itself created without a controller
// reference (an operator that starts setting them) is an orphan too, to be
// adopted once with AdoptOrphans(true). Refused means nothing written; the
// error names the
// object, says how to adopt it, and, from a dry run of the apply (one
// request, unless the apply forces), names the fields other managers own
// with other values, so that both are known at once. (Intents without a
// controller reference are not checked: they take over no object, only
// fields, which [Force] governs.)
//
// How the Applier knows whose the object is, without a request where it
// can:
//
//   - The cache's copy (free) when it has one, or the object the caller
//     read just before and hands over with [Current] (reconciler.Sync
//     hands each child it listed): its controller decides.
//   - The Applier's record of its own last apply of the object (its UID
//     and controller), which covers a cache that has not yet received the
//     object the Applier just created.
//   - Otherwise (no cache, a cache that cannot read the kind, or a cache
//     that says there is no object the Applier remembers), one GET to the
//     API server before the apply, counted in [Result.Requests]; once per
//     object, since the record remembers the answer. For a kind the
//     operator may list but not get, a list by name instead (the 403 is
//     remembered for the Applier's life). An Applier without a
//     cache thus sends two requests for the first apply of each object
//     with a controller reference, one after. A failed GET fails the apply
//     (it cannot tell whose the object is); AdoptOrphans(true) needs no GET:
//     the API server itself refuses a second controller reference.
//   - The race: an object created by someone else after the cache or the
//     GET said there was none. Server-side apply has no create-only
//     precondition, so the apply takes it over; the answer tells (200 for
//     an object other than the one the apply may claim, where a create is
//     201), and the Applier at once removes its controller reference again
//     (one more apply, of the intent without it) and returns a
//     [*TakeoverError] with Appeared set. If that second apply fails, the
//     next apply of the object tries again first.
//
// reconciler.Sync decides adoption itself (reconciler.AdoptOrphans) and
// passes AdoptOrphans(true) to the Applier.
//
// # Inputs
//
//   - A client-go apply configuration: exactly the fields set are sent and
//     owned. The recommended form.
//   - An *unstructured.Unstructured authored as partial intent: sent as is.
//   - A typed object (*appsv1.Deployment): convenient, with one caveat. Its
//     apiVersion and kind come from the scheme (typed objects usually have an
//     empty TypeMeta), or, for a type the scheme does not know, from its
//     own apiVersion and kind; and its unstructured form is pruned of what a Go
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
// applied the object (or the first apply of an existing object since start,
// unless the Applier read it first to learn its controller);
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
// With a cache ([WithCluster] or [WithCache]) the Applier sends nothing, and
// answers Unchanged with Requests == 0, when the cache's copy of the object
// proves that the apply would change nothing. Three proofs, the cheapest
// first:
//
//   - Its record. The Applier remembers, per object (group, kind,
//     namespace, name), the UID, the resourceVersion the server returned, a
//     hash of the intent (with the field owner and Force), and, once the
//     cache has shown that apply, a fingerprint of the fields its
//     managedFields entry owns. The same intent again, with the cache at
//     that UID and resourceVersion: nobody changed the object since.
//   - Ownership. The same intent again, the cache at that UID but another
//     resourceVersion (someone else wrote: a controller its status, another
//     manager a label), and our managedFields entry still owns exactly the
//     fields it owned then. Server-side apply moves a field to
//     whoever changes its value (an update, or an apply with force), so an
//     unchanged set of ours proves that no one changed our values. This
//     holds whatever the API server filled in after our apply, which the
//     values cannot tell: defaults inside what the intent sets as a whole
//     (atomic fields: a StatefulSet's volumeClaimTemplates get
//     status.phase and spec.volumeMode and lose apiVersion and kind, a
//     downward-API fieldRef gets its apiVersion, a NetworkPolicy rule's
//     ports their protocol, a Job's podFailurePolicy conditions their
//     status) and zero values of typed objects the server replaces (a
//     Service port's targetPort 0 becomes its port). It needs no schema,
//     so it covers custom resources too. It trusts that no one else
//     applies as our field manager.
//   - The values, which need no memory of earlier applies and so hold
//     right after a restart. An apply writes nothing when the field
//     owner's Apply entry in the object's managedFields, recorded at the
//     intent's apiVersion, owns exactly the intent's fields (a field the
//     intent no longer sets would be removed; an entry at another
//     apiVersion would be rewritten), and the object holds the intent's
//     value in each of them, lists in the intent's order (list-map items
//     such as containers matched by name, ports by containerPort and
//     protocol, with the schema's key defaults). The field sets and the
//     merge rules are server-side apply's own
//     (sigs.k8s.io/structured-merge-diff), with the schema client-go's
//     apply configurations are generated from. Flux's ssa package asks the
//     server a dry run per object for this decision; the cache already
//     knows. Not used when this Applier last applied another intent at a
//     version the cache does not hold: the cache may lack that write, and
//     its older copy may hold the intent being applied (a revert).
//
// The last two need managedFields in the cache, which [KeepManagedFields]
// keeps (ours only) as a cache transform. The values proof needs the
// object's schema, so it covers the Kubernetes API's own kinds (those of
// client-go's apply configurations), and it is conservative: whatever it
// cannot tell (a custom resource, no entry of ours because a transform
// such as cache.TransformStripManagedFields removed them all, an intent
// outside the schema, one with a resourceVersion or uid precondition, a
// value the server defaulted or wrote another way, "0.5" for "500m") costs
// one apply, never a wrong Unchanged. So after a restart, an object whose
// intent the server completes (the list above) or a custom resource costs
// one apply that writes nothing, once; the record then takes over. With a
// cache that strips managedFields, only the record proves anything: one
// request after a restart or another's write. The proofs are tried in
// order of cost: the record is a comparison of the intent's hash (a walk of
// the input's Go value, no encoding), the ownership proof hashes our
// managedFields entry, the values proof converts both objects to typed
// values and walks them. Measured on a shared 2-core machine
// (BenchmarkApplyConverged, BenchmarkApplyUnchanged): an unchanged typed
// Deployment costs some 15µs of CPU and 37 allocations by the record, about
// half of it the cache's deep copy of the object, and some 600µs and 2,400
// allocations by the values; the schema the values need is parsed on its
// first use (about 60ms and 20MB allocated, once per process). The Applier
// never modifies what it reads from the cache, so a cache configured with
// UnsafeDisableDeepCopy for the kinds you apply saves that copy.
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
// A failed apply returns the zero [Outcome], which is none of the three (it
// prints as "None"), so that a result read without its error claims
// nothing.
//
// Measured against a real kube-apiserver (see the tests and
// BenchmarkApplyUnchanged): create 1 request, update 1, unchanged 0 with a
// cache (after someone else's write too; after a restart too, except as
// said above) and 1 without; bad input that can be seen locally 0. With a
// controller reference in the intent and no cache, the first apply of each
// object reads it first (2 requests); a refused takeover sends a dry run
// (1).
//
// Memory is bounded: at most [WithMaxRecords] objects (default 10,000),
// least recently applied forgotten first. An object is also forgotten when
// the cache or the API server holds another UID under its name, and on
// [Applier.Forget] (call it from an informer's DeleteFunc to forget every
// deleted object at once). One the cache says is gone is not forgotten:
// the cache may not have received the Applier's own creation of it yet,
// and the record is what tells that object from someone else's. A
// forgotten object costs the values proof, or one request, next time.
//
// # Errors
//
// Errors are koperrors errors naming the object ("apply Deployment
// default/web: ..."). Problems visible locally send no apply request and are
// of Kind Invalid, naming the field: no apiVersion/kind, no metadata.name, a
// kind the API server does not serve (the RESTMapper may ask discovery), no
// metadata.namespace for a namespaced kind or one for a cluster-scoped kind
// (checked with [scope.Scope.Check]), an empty field owner, an input that is
// not an object, a controller reference without a UID, a typed object
// whose type the scheme does not know (register it with [WithScheme], or
// set its apiVersion and kind).
//
// A refused takeover (see Ownership) is of Kind Invalid too, and its chain
// holds a [*TakeoverError]: errors.As tells it, its Controller says whose
// the object is (nil for an orphan), and the message says what to do. It
// is terminal (koperrors.IsTerminal): retrying cannot help until someone
// renames the child or removes the object, so status.SetError shows
// Stalled naming the holder, reconciler.Result stops controller-runtime's
// retries, and kopgo's loop looks again only after its Stalled interval.
// Two refusals that time resolves are not terminal: an object that
// appeared during the apply, and one held by the owner's deleted
// predecessor of the same kind and name (the garbage collector removes
// it).
//
// A field-manager conflict (without force, another manager owns a
// field with another value) is of Kind Invalid, not Conflict, and its chain
// holds a [*ConflictError] listing each field and its manager ([Conflicts]).
// Unlike an optimistic-concurrency 409, which the reconcile loop retries at
// once and silently, retrying cannot help until the other manager lets go:
// force ownership to take the fields over, or stop setting them. It is
// therefore terminal (koperrors.IsTerminal), as a refused takeover is: the
// object shows Stalled=True with a message that names each field and its
// manager and both ways out, and is reconciled again when it changes (or
// on the loop's long Stalled interval), not retried with backoff.
package apply

// Package reconciler is kopgo's reconcile contract: implement
// [Reconciler][T] for your custom resource, run it with kopgo's controller
// Builder (github.com/kopgo/kopgo/controller: Run, or Setup in a manager of
// your own), and the framework reads the object, runs your code under a
// deadline with panics recovered, keeps kstatus conditions, adds and
// removes its finalizer, and records metrics, spans and events.
//
//	type WebApp struct{}
//
//	func (WebApp) Reconcile(ctx context.Context, app *v1.WebApp, env *reconciler.Env) (reconciler.Action, error) {
//		res, err := env.Applier.Apply(ctx, deploymentFor(app))
//		if err != nil {
//			return reconciler.Done(), err
//		}
//		if res.Outcome == apply.Created {
//			env.Recorder.Normal(app, nil, "Created", "Apply", "Deployment created")
//		}
//		return reconciler.Done(), nil
//	}
//
// # Why an Env beside the object
//
// The reconciler receives (ctx, obj, env): the object, read from the cache,
// and an [Env] holding the cached client (writing as the field owner), an
// uncached reader, the event recorder, the scheme and an Applier for that
// field owner (reading the cache, so an unchanged apply sends nothing; an
// apply.Fake in unit tests). This is the kube-rs and java-operator-sdk
// shape rather than kubebuilder's habit of a reconciler struct holding a
// client: the framework owns the wiring, so a reconciler needs no
// constructor and no fields for plumbing (its struct is free for its own
// dependencies), a test passes a different Env without building a
// manager, and nothing is global or injected by reflection.
//
// # Results
//
// Reconcile returns an [Action] and an error, apart (kube-rs' Action): the
// Action says when to look again, the error what failed. A requeue is never
// an error and a failure never hides in a requeue.
//
//   - [Done], nil: done. Ready=True with reason Succeeded (a True Ready the
//     reconciler set keeps its reason and message), observedGeneration
//     stamped. A reconciler that is still waiting (a rollout) says so with
//     status.MarkReconciling, one that cannot act on the spec with
//     status.MarkStalled: Reconciling and Stalled describe one reconcile,
//     so they are removed before Reconcile is called and stand only if it
//     sets them again.
//   - [RequeueAfter](d), nil: the same, and the object is reconciled again
//     after d (a schedule, a renewal, polling). A requeue changes no
//     condition: a Ready object stays Ready=True, its lastTransitionTime
//     and its status untouched, with no status write.
//   - [Requeue](), nil: look again as soon as the rate limiter allows.
//   - koperrors.Terminal(err), a 422 from the API server that names a
//     field (a child the spec asked for is invalid) or a 400: a verdict
//     about the spec. Stalled=True and Ready=False with the error's reason
//     (koperrors.ReasonOf: the kind, unless the error was marked with
//     koperrors.WithReason or is a provider's 401 from koperrors.FromHTTP,
//     "Unauthorized"), a Warning event with that reason, no retry with
//     backoff; the object is reconciled again when it changes, after the
//     Action's delay if one was returned (a schedule goes on), and after
//     the Builder's StalledRetry (10 minutes, or the error's own delay if
//     longer) anyway, so that a verdict made by mistake does not last.
//   - An optimistic-lock 409 Conflict: retried promptly through the rate
//     limiter (its backoff starts at 5 ms), without a log line or status
//     write; the fourth in a row is a failure like any other below.
//   - Any other error (AlreadyExists included): Ready=False and
//     Reconciling=True, with the error's reason (koperrors.ReasonOf, as
//     above) and its message; the status the reconciler set besides (an ID
//     it recorded) is written too. Retried after the delay of the Action
//     returned with it (reconciler.RequeueAfter(d), err: d instead of the
//     backoff, from the first failure on), else after the [ErrorPolicy]
//     hook's delay (it sees how many times in a row the object failed),
//     else with exponential backoff (5 ms doubling to 5 minutes); without
//     an Action's delay, never sooner than the delay the error carries
//     (koperrors.RetryAfterOf: a provider's Retry-After through
//     koperrors.FromHTTP), so a 429 with Retry-After: 30 waits 30 s
//     however short the policy or the backoff. Only the API
//     server's own unavailability (an error of kind Unavailable or Timeout
//     from a request to it: a Kubernetes API status, or a failed connection
//     to its host and port) is retried within 3 s at most, so that an
//     outage ends promptly; the same kinds from an external system (a
//     refused connection, a provider's 503 as koperrors.Unavailable) back
//     off exponentially. The first retry may come a few milliseconds later
//     than asked: it waits until the cache shows the status just written
//     (see Reading your own writes).
//   - A NotFound about the object itself (it was deleted while the
//     reconcile ran): nothing failed; no status, no event, no error.
//   - A panic: recovered, logged with its stack, counted, and that object's
//     error; other objects are not affected.
//   - Past its deadline (the Builder's ReconcileTimeout): the reconcile's
//     context is cancelled; the reconcile counts as a Timeout error, and
//     the status write after it says so in Ready=False. A reconcile that
//     ignores its cancellation is waited for one more second, then left
//     running: its worker takes other objects, and its object is not
//     reconciled again until that call returns.
//
// What controller-runtime sees agrees with what kopgo records: every
// failure is returned to it as an error (a terminal one as
// reconcile.TerminalError), so its metrics count the same failures as
// kopgo_reconcile_errors_total and its rate limiter backs off.
//
// One function decides the conditions: status.Finish, from the conditions
// as read, what the reconciler set, and the error; the loop, Sync's
// summary and a plain controller-runtime reconciler's status.SetError all
// go through it. Status is written through status.Patcher: once, only when
// it changed, so status writes never feed an endless loop. A condition
// whose status did not move keeps its lastTransitionTime. A status write
// that fails makes the reconcile fail, so it is retried until status is
// written. Objects whose type does not implement status.Setter get no
// status handling.
//
// [Result] maps an Action and an error onto ctrl.Result for a plain
// controller-runtime reconciler that uses kopgo's helpers: a requeue waits
// as asked and is not counted as an error, and so does a failure whose
// error carries a delay (koperrors.RetryAfterOf): it is requeued after
// that delay, since controller-runtime drops the result of a reconcile
// that returns an error.
//
// # Shutdown
//
// When the controller stops (SIGTERM), reconciles in flight keep their
// context for a while (the Builder derives it from its graceful-shutdown
// window) and their outcome is recorded. A reconcile cut short by
// shutdown writes nothing into status: the next leader redoes it.
//
// # Cleanup on deletion
//
// A Reconciler that also implements [Finalizer] gets its finalizer
// ("kopgo.dev/<controller>" unless the Builder's FinalizerName) before its
// first Reconcile runs, so that whatever Reconcile makes is covered by the
// cleanup even if the process dies the moment after (SIGKILL, a node
// lost): an object deleted while the operator is down waits for it, and
// gets its Cleanup when the operator is back. An object whose spec is
// invalid from the start loses the finalizer again: when the reconcile
// that added it ends in a terminal failure having written nothing
// (through Env.Client or Env.Applier) and called no external system
// (through the external package), the finalizer is removed (nothing was
// made, so nothing needs undoing), and the object is deleted at once,
// without a Cleanup call. Deleted while the operator is down, such an
// object goes at once too. One whose first reconcile wrote or called
// before failing (an external resource created, then a 403 reading it
// back), or that was ever reconciled without a terminal failure, keeps the
// finalizer until its Cleanup finished. When the object is deleted,
// Cleanup runs instead of Reconcile:
//
//   - [Done], nil: finished; only the framework's finalizer is removed
//     (another controller's stays), and a CleanedUp event is recorded.
//   - a requeue, nil: not finished (an external deletion in progress); run
//     again then. The object stays, nothing is logged as a failure.
//   - an error: retried with backoff; Ready=False names the finalizer.
//   - a terminal error: Stalled=True, naming the finalizer that blocks
//     deletion and the way out: fix the cause (any change to the object
//     retries the cleanup, as does the StalledRetry interval), or remove
//     the finalizer from metadata.finalizers by hand to let the object go
//     without its cleanup (kubectl edit).
//
// One deletion, one Cleanup that reports done: once it has, it is not run
// again for that object (its UID), whatever a queued reconcile or the
// delete event still shows. It runs again only after a failure, a
// requeue it asked for, or when the process died between the cleanup and
// the finalizer's removal: make its side effects idempotent (a delete
// that finds nothing is done). kube-apiserver can delete an object whose
// finalizer it has just accepted (kubernetes/kubernetes#77988); the
// Builder watches deletions, and such an object's Cleanup runs from its
// last known state.
//
// # Reading your own writes
//
// A Reconcile or Cleanup never runs on an object older than the last
// write this process made to it: the loop's finalizer patches, its status
// write, and the reconciler's own Update and Patch of the object (and of
// its status) through Env.Client. The informer's cache learns of a write
// a few milliseconds after it; a reconcile that would read the object
// before that is deferred (looked at again after 5 ms, doubling to 500
// ms), that one object only, until the cache shows the write. The wait is
// bounded: after 10 s the reconcile runs on what the cache has, and logs
// it. Deferrals are counted in kopgo_reconcile_deferred_total{controller,
// outcome="deferred"|"expired"}. So an ID a Reconcile minted and put in
// status is there on the next Reconcile, and a Cleanup that finished is
// not run again on a cached copy that still shows the finalizer.
//
// Not covered: writes to other objects (a child, a Secret; read them with
// Env.Reader when a stale read would cost), writes through server-side
// apply with an apply configuration (Env.Client.Apply), and writes by
// other processes. The status write is a forced server-side apply of the
// status the reconcile set: fields another writer owns stay as they are,
// and a field both write takes kopgo's value (a reconcile that read a
// status older than someone else's write, which the loop cannot see,
// replaces that writer's value of a field the reconciler sets).
//
// # What wakes an object
//
// Every watch event that passes the controller's event filter (under the
// controller Builder: changes of the object other than to its status
// alone, see the controller package's "What triggers a reconcile") and
// every requeue reaches the queue: none is dropped on a guess about who
// wrote what (after a relist, someone else's change can arrive merged with
// the echo of ours). A wake-up runs the reconciler when:
//
//   - the object changed since the last Reconcile or Cleanup acted on it:
//     generation, labels, annotations, deletion, the loop's finalizer (any
//     new resourceVersion for kinds without metadata.generation or under
//     the user's own event filter). The reconcile's own writes to its
//     object through Env.Client are folded into what it acted on;
//   - news came: a child's event other than the state the parent's
//     reconcile got back from Env.Applier, an object watched with Watch or
//     named through References, a deletion, any watch added through
//     WithWatches;
//   - a requeue is due: RequeueAfter, the backoff, the Stalled retry, the
//     informers' resync.
//
// Anything else (the echo of the loop's finalizer patch, of an own
// annotation, of a child's own apply, another controller's finalizer or
// owner reference) runs nothing, and cuts no backoff or RequeueAfter
// short; kopgo_reconcile_skipped_total counts it (reason "nothing_new" or
// "not_due"). The echo of the loop's status write does not reach the
// queue under the Builder's default filter, so it is not counted (under
// the user's own Predicates every new resourceVersion runs the reconciler,
// that echo included). A delay the error itself carried
// (a provider's Retry-After, [koperrors.RetryAfterOf]) holds for every
// wake-up, changes included (reason "retry_after").
//
// All of this is the process's memory: a restarted operator reconciles
// every object once (a converged one sends no write), and backoffs,
// RequeueAfter and Retry-After delays are not kept across a restart or a
// leader handover.
//
// Children: the state a reconcile got back from Env.Applier (same UID and
// resourceVersion) is taken as seen, so read a child's state from the
// apply's Result (Result.Into), not from the cache. This holds for the
// kinds watched with Owns, and for [Sync]'s children (see "Cost" on
// [Sync]).
//
// Hooks are found on the Reconciler's method set, so embedding composes:
// a type that embeds a *[Syncer] and defines Cleanup is a Sync reconciler
// with a cleanup of its own ([Syncer.Observe] gives it the children), and
// one that defines RetryAfter gets an [ErrorPolicy].
//
// # Declarative children
//
// [Sync] is Metacontroller's and roperator's style as a Reconciler: a
// sync function receives the parent and its observed [Children] and returns
// the children it wants (setting the parent's status as it likes) and when
// to look again; Sync sets their controller references and owner label,
// applies them with Env.Applier and, once every desired child is in place,
// prunes the observed children no longer returned. An unchanged parent
// costs no request. A sync function talks to no API server, so it is
// unit-tested with a [Children] slice built by hand:
//
//	r := reconciler.Sync([]client.Object{&appsv1.Deployment{}, &corev1.Service{}},
//		func(ctx context.Context, echo *v1.EchoServer, observed reconciler.Children) ([]client.Object, reconciler.Action, error) {
//			return []client.Object{deploymentFor(echo), serviceFor(echo)}, reconciler.Done(), nil
//		})
//
// A controller owns its children, and only them:
//
//   - Drift is reverted: Sync applies with Force, so a field someone edited
//     is set back on the next reconcile.
//   - Sync never takes over an object it did not create. A desired child
//     whose name an object of someone else holds is refused (the parent is
//     Stalled, naming the object and its controller) rather than adopted
//     and then deleted with the parent. [AdoptOrphans] opts in to adopting
//     objects without a controller, per kind or per child.
//   - [Child] wraps a desired child (or a kind) with options: an
//     [UpdateStrategy] ([Recreate] when the server refuses an immutable
//     change, [OnDelete], [CreateOnce] for generated passwords and keys),
//     [RunOnce] (a migration Job once per spec generation or per key, its
//     outcome summarised into Ready), [DependsOn] (apply only once other
//     children are ready), [AdoptOrphans], [DeleteWith] (how a pruned or
//     recreated child is deleted: orphan its Pods, say). [ChildOf] reads a
//     child's options back in a unit test.
//   - Unless the sync function reports Reconciling or Stalled itself, the
//     parent's conditions summarise the children's readiness: Reconciling
//     while one rolls out or waits, Ready=False naming a failed one,
//     Ready=True naming them all when all are current ("3 of 3 children
//     ready: ...", reason [ReasonChildrenReady]).
//   - One event per reconcile names what changed.
//
// The [Syncer] implements [Owner] with its child kinds, which the
// controller Builder watches and indexes.
//
// # Sync: objects it did not create
//
// Deleting a parent deletes its children (the garbage collector follows
// their controller references), so Sync never puts its controller reference
// on an object someone else made: a desired child whose name is taken by an
// object the parent does not control is refused, and the parent is Stalled
// with a Terminal error naming the object and its controller (the Stalled
// and Ready=False conditions carry reason Invalid, the error's kind, and
// the error's message, which says how to adopt, rename or remove). Nothing is
// written to that object; the other children are still applied, nothing is
// pruned. Rename the child or remove the object, then touch the parent (the
// object is not the parent's, so its deletion does not wake the parent; the
// manager's resync period does, eventually).
//
// A refusal's error, as returned by Reconcile, holds an
// [*apply.TakeoverError] (errors.As tells it; its Controller says whose the
// object is, nil for an orphan), whether Sync refused the child itself or
// the Applier refused it on create: a taken name is one verdict, terminal
// and shown as Stalled, wherever it is met.
//
// Nothing is written into a namespace Sync does not own. A desired child
// in a namespace that is itself a desired Namespace child depends on that
// Namespace, as if by [DependsOn]: it is applied only once the Namespace
// is the parent's and ready, so Namespaces are applied first whatever the
// sync function's order. When the Namespace is refused (it exists, and is
// someone else's), no child in it is written, and the parent is Stalled
// with the refusal and a second terminal error naming the children held
// back ("desired children RoleBinding team-a/edit, ResourceQuota
// team-a/quota not written: they are in namespace team-a, which is not
// this Tenant's: ..."); when it is being deleted, its children wait, with
// the parent Reconciling, until it is gone and created again. (A child in
// a namespace that is not among the desired children is written there:
// naming it is the sync function's choice.)
//
// An object with no controller reference at all (an orphan: created by
// hand, or left by `kubectl delete --cascade=orphan`) is adopted only with
// [AdoptOrphans](true), for its kind (wrap the kind's example in [Child]) or
// for one child. An object controlled by anything else is never adopted. An
// object controlled by an earlier parent of the same kind and name (deleted
// and created again) is waited for: the garbage collector is removing it.
// An object being deleted is waited for too, and then created anew.
//
// Sync decides from what it sees: the cache, and for a child the cache does
// not hold, one live get by name through Env.Reader, unless the cache of
// the child's kind is complete (Env.CompleteKinds). A cache restricted by
// a label, field or namespace selector does not hold other people's
// objects, so its "not found" proves nothing, and Sync asks the API
// server. A complete cache (no such restriction on the kind: what the
// controller Builder's Run builds for every child kind; on a manager of
// your own, say so with Builder.CompleteCache or
// controller.WithCompleteCache) holds every object that existed when it
// last heard from the API server, so Sync creates a new child with its
// apply alone. An Env without a Reader relies on the cache alone. An
// operator that may list a child kind but
// not get it reads with a list by name instead (after one get refused
// with 403), which the API server answers only once its watch cache caught
// up with etcd: some tens of milliseconds while writes stream in, against
// a few for a get; give the operator get on its child kinds.
//
// Server-side apply has no create-only precondition (metadata.uid in an
// apply makes it update-only: "uid mismatch ... no existing object was
// found"), so an object created by someone else after Sync looked and
// before its apply is taken over by the apply, and the fields the child
// sets are overwritten (Sync forces ownership; see drift below). That
// window is one round trip after a live read, and the cache's lag (the
// time a watch event takes to arrive: milliseconds, longer on a loaded
// API server) with a complete cache. The Applier detects it: the API
// server answers 200 instead of 201, for an object whose UID is not the
// one the Applier created (a child this process created itself, which the
// cache does not show yet, is no takeover). Sync then removes its
// controller reference and owner label again at once, and returns a
// Conflict error naming the object and the field manager that created it,
// after which the object is refused as above; the field values it applied
// stay. Naming a kind in Env.CompleteKinds whose cache is in fact filtered
// widens that window to every object the filter hides, which Sync would
// then overwrite before disowning: name only kinds whose cache holds
// everything.
//
// # Sync: drift
//
// A controller owns its children: Sync applies forcing ownership
// (apply.Force(true), which a bare Applier.Apply does not do, as it cannot
// tell its own objects from others'; Sync checks that first), so after someone edits a field Sync sets (kubectl
// edit, a script), the next reconcile sets it back, and later changes of the parent keep reaching the
// child. For the rare field that is meant to be shared, stop setting it, or
// pass WithApplyOptions(apply.Force(false)): a changed field then fails the
// apply with a field-manager conflict, as plain server-side apply does.
//
// # Sync: update strategies
//
// [InPlace] (the default) applies the new version. [Recreate] does too, and
// when the API server refuses it because a field that cannot change would
// change, deletes the child and creates the new version once the old one is
// gone: the parent is Reconciling meanwhile and is reconciled again shortly
// (no worker waits). [OnDelete] leaves an existing child alone until someone
// deletes it. Wrap a kind in [Child] to set its strategy, a desired child to
// override it for that child.
//
// # Sync: dependencies
//
// A desired child wrapped with [DependsOn] is applied only once the children
// it depends on are ready by status.ReadinessOf (a Secret as soon as it
// exists, a Deployment once rolled out): until then the parent is
// Reconciling, naming the child that waits and what for, and children no
// longer desired are not pruned. Pruning does not follow dependencies.
// A child in a namespace that is itself a desired Namespace depends on it
// without DependsOn (see "Sync: objects it did not create"); a child that
// depends on a child Sync refused is not written either, and the parent's
// Stalled message names it.
//
// # Sync: readiness
//
// When the parent has conditions (status.Setter) and the sync function
// reported neither Reconciling nor Stalled itself, Sync summarises its
// children with status.ReadinessOf: a failed child (a Deployment past its
// progress deadline, a failed Job) makes the parent Ready=False naming it;
// a child still rolling out, one waiting for a dependency and one being
// recreated make it Reconciling, naming the first; when every child is
// current, Ready=True follows (the sync function's own Ready=True, with
// its reason and message, if it set one).
//
// # Sync: events
//
// One Normal event "Synced" per reconcile that changed something, naming
// the children ("created Deployment shop/web, Service shop/web"),
// rather than one per child: a rollout of 500 parents with three children
// records 500 events, not 1,500.
//
// # Sync: scope
//
// A namespaced parent owns namespaced children in its own namespace (owner
// references do not cross namespaces); declaring a cluster-scoped child kind
// for it is a Config error. A cluster-scoped parent may own cluster-scoped
// children and namespaced children in any namespace (they must name it);
// their observed children are listed in all namespaces.
//
// # Sync: owner label
//
// The label is "<parent group>/<parent kind, lower case>" with the parent's
// name as value ("echoserver.examples.kopgo.dev/echoserver: web"), or
// "sync.kopgo.dev/<kind>" for a parent of the core group; WithOwnerLabel sets
// another key. It lets owners.LabelMapper and `kubectl get -l` find a
// parent's children; which children are the parent's is decided by the
// controller reference's UID, so a child of another parent with the same
// label value (a parent deleted and created again, or one of another kind)
// is never listed as observed nor pruned. The parent's name must be a valid
// label value (at most 63 characters).
//
// # Sync: design
//
// The sync function gets no Env: like roperator's and Metacontroller's hooks
// it is a pure function of the parent and its children, so it is unit-tested
// without a cluster (its observed [Children] are a plain slice); a sync that
// must read something else embeds the Syncer in a type of its own whose
// Reconcile reads first and then calls the Syncer's (the embedded
// ChildKinds keeps the Builder's watches and index). Children come
// back typed rather than as JSON, since Go operators hold typed objects. Per-child options travel in a wrapper ([Child]) rather
// than in annotations, which would reach the API server. Mistakes in the
// desired set are Terminal: the same code computes the same set again, so
// retrying only repeats the error, while Stalled=True shows it on the
// parent. Pruning waits for every desired child to be in place, so a child
// renamed to a name that fails to apply does not leave the parent with
// neither. Sync returns the concrete *Syncer (kopgo returns concrete types);
// it never panics: its own mistakes (no kinds, a nil function) are
// Terminal Config errors of every Reconcile. Cleanup is not an option of
// Sync but the [Finalizer] hook on a type that embeds the Syncer: one
// mechanism for every reconciler, and a Cleanup defined there can never be
// silently ignored.
package reconciler

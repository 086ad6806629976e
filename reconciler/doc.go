// Package reconciler is kopgo's reconcile contract: implement
// [Reconciler][T] for your custom resource, and the framework reads the
// object, runs your code under a deadline with panics recovered, keeps
// kstatus conditions, adds and removes its finalizer, and records metrics,
// spans and events.
//
//	type WebApp struct{}
//
//	func (WebApp) Reconcile(ctx context.Context, app *v1.WebApp, env *reconciler.Env) error {
//		res, err := env.Applier.Apply(ctx, deploymentFor(app))
//		if err != nil {
//			return err
//		}
//		if res.Outcome == apply.Created {
//			env.Recorder.Normal(app, nil, "Created", "Apply", "Deployment created")
//		}
//		return nil
//	}
//
// Run it with kopgo's controller.Builder, in a manager of its own or in
// yours; [NewAdapter] returns the reconcile.Reconciler the Builder runs, for
// controller-runtime's builder.
//
// # Why an Env beside the object
//
// The reconciler receives (ctx, obj, env): the object, read from the cache,
// and an [Env] holding the cached client (writing as the field owner), an
// uncached reader, the event recorder, the scheme and an Applier for that
// field owner (reading the cache, so an unchanged apply sends nothing; an
// apply.Fake in unit tests). This is
// the kube-rs and java-operator-sdk shape rather than kubebuilder's habit of
// a reconciler struct holding a client: the framework owns the wiring, so a reconciler
// needs no constructor and no fields for plumbing (its struct is free for its
// own dependencies), a test passes a different Env without building a
// manager, and nothing is global or injected by reflection.
//
// # Results
//
//   - nil: done. Ready=True with reason Succeeded (a True Ready the
//     reconciler set keeps its reason and message), observedGeneration
//     stamped. A reconciler that is still waiting (a rollout) says so with
//     status.MarkReconciling or status.MarkStalled: Reconciling and Stalled
//     describe one reconcile, so they are removed before Reconcile is
//     called and stand only if it sets them again.
//   - koperrors.Terminal(err), or a 422 Invalid or 400 BadRequest from the
//     API server (a child the spec asked for is invalid): no retry until the object changes;
//     Stalled=True and Ready=False with the error's kind as reason; a
//     Warning event.
//   - koperrors.RequeueAfter(nil, d): not done yet, nothing failed; come
//     back after d. Reconciling=True and Ready=Unknown (reason Progressing)
//     unless the reconciler set conditions itself.
//   - koperrors.RequeueAfter(err, d): failed, retry after d.
//   - An optimistic-lock 409 Conflict: retried promptly through the rate
//     limiter (its backoff starts at 5 ms), without a log line or status
//     write; the fourth in a row is a failure like any other below.
//   - Any other error (AlreadyExists included): Ready=False,
//     Reconciling=True, retried with exponential backoff, or per the
//     [ErrorPolicy] hook (a fixed delay is one line).
//   - A panic: recovered, logged with its stack, counted, and that object's
//     error; other objects are not affected.
//   - Past its deadline ([WithTimeout]): the reconcile's context is
//     cancelled; the reconcile counts as a Timeout error, and the status
//     write after it ([WithStatusTimeout]) says so in Ready=False. A reconcile that ignores
//     its cancellation is waited for one more second, then left running:
//     its worker takes other objects, and its object is not reconciled
//     again until that call returns.
//
// What controller-runtime sees agrees with what kopgo records: every
// failure is returned to it as an error (a terminal one as
// reconcile.TerminalError), so its metrics count the same failures as
// kopgo_reconcile_errors_total and its rate limiter backs off. Delays a
// reconciler asks for, and a quick retry after the API server was away
// (failures of Kind Unavailable or Timeout back off at most 3 s), need the
// controller to use the rate limiter [NewAdapter] returns; kopgo's Builder
// does.
//
// Status is written through status.Patcher: once, only when it changed, so
// status writes never feed an endless loop. A condition whose status did
// not move keeps its lastTransitionTime. A status write that fails makes
// the reconcile fail, so it is retried until status is written. Objects
// whose type does not implement status.Setter get no status handling, and
// an object being deleted gets none unless its Cleanup runs.
//
// # Shutdown
//
// When the controller stops (SIGTERM), reconciles in flight keep their
// context for a while ([WithDrain]; the Builder derives it from its
// graceful-shutdown window) and their outcome is recorded. A reconcile cut
// short by shutdown writes nothing into status: the next leader redoes it.
//
// # Cleanup on deletion
//
// A Reconciler that also implements [Finalizer] gets its finalizer
// ("kopgo.dev/<controller>" unless [WithFinalizerName]) added before its
// first Reconcile; when the object is deleted, Cleanup runs, and once it
// returns nil only that finalizer is removed. A failing Cleanup is retried
// with backoff and reported in status and events. Cleanup may run more than
// once (a crash between cleanup and the finalizer's removal): make its side
// effects idempotent. A [Syncer] has a Cleanup method but takes a finalizer
// only when given [WithFinalize].
//
// # Declarative children
//
// [Sync] is Metacontroller's and roperator's style as a Reconciler: a
// sync function receives the parent and its observed [Children] and returns the
// children it wants (setting the parent's status as it likes); Sync sets
// their controller references and owner label, applies them with
// Env.Applier and, once every desired child is in place, prunes the observed
// children no longer returned. An unchanged parent costs no request. A
// sync function talks to no API server, so it is unit-tested with a
// [Children] slice built by hand:
//
//	r := reconciler.Sync([]client.Object{&appsv1.Deployment{}, &corev1.Service{}},
//		func(ctx context.Context, echo *v1.EchoServer, observed reconciler.Children) ([]client.Object, error) {
//			return []client.Object{deploymentFor(echo), serviceFor(echo)}, nil
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
//     change, [OnDelete]), [DependsOn] (apply only once other children are
//     ready), [AdoptOrphans].
//   - Unless the sync function sets them, the parent's conditions summarise the
//     children's readiness: Reconciling while one rolls out or waits,
//     Ready=False naming a failed one, Ready=True when all are current.
//   - One event per reconcile names what changed.
//   - [WithFinalize] adds cleanup on deletion, retried until it is done.
//
// [Syncer.ChildKinds] lists the child kinds, which the controller Builder
// watches.
package reconciler

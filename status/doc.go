// Package status maintains an object's conditions in kstatus' vocabulary
// (Ready, Reconciling, Stalled, which Flux, Argo CD and
// `kubectl wait --for=condition=Ready` understand), its
// status.observedGeneration, and writes the status subresource with one
// server-side apply, or not at all when nothing changed.
//
// A CRD type opts in with two one-line methods ([Getter], [Setter]), and
// two more if it has status.observedGeneration
// ([ObservedGenerationAccessor]):
//
//	func (w *WebApp) GetConditions() []metav1.Condition  { return w.Status.Conditions }
//	func (w *WebApp) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }
//
// A type that cannot get methods (a type from another module, a frozen
// API, kubebuilder's tutorial types) is given to the same functions
// through an [Accessor], with the same semantics:
//
//	s := status.Access(&cronJob, &cronJob.Status.Conditions).
//		WithObservedGeneration(&cronJob.Status.ObservedGeneration) // if it has one
//	status.SetError(s, err)
//
// A reconciler, kopgo's or a plain controller-runtime one:
//
//	func (r *WebAppReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
//		var app v1.WebApp
//		if err := r.Get(ctx, req.NamespacedName, &app); err != nil {
//			return ctrl.Result{}, client.IgnoreNotFound(err)
//		}
//		p := status.NewPatcher(&app)
//		err := r.deploy(ctx, &app) // may set app.Status fields and conditions
//		status.SetError(&app, err)  // Ready/Reconciling/Stalled from the outcome
//		if _, perr := p.Patch(ctx, r.Client, &app, client.FieldOwner("webapp-controller")); perr != nil {
//			return ctrl.Result{}, errors.Join(err, perr)
//		}
//		return ctrl.Result{}, err
//	}
//
// kopgo's reconcile loop does the NewPatcher, Begin, Finish and Patch steps
// itself when the reconciled type is a [Setter].
//
// # Conditions
//
// Conditions are metav1.Condition, set through apimachinery's
// meta.SetStatusCondition ([Set]): lastTransitionTime moves only when a
// condition's status moves (not when only its reason or message does),
// observedGeneration is stamped with the object's generation, and
// conditions keep a fixed order ([Ready], [Reconciling], [Stalled], then
// the other types sorted) so that an unchanged set of conditions
// serializes identically and costs no write. [Get] and [IsTrue] read them
// (IsTrue(app, status.Ready)); a True condition observed for an older
// generation does not count as True.
//
// # kstatus
//
// Ready is "normal-true": True when the desired state is in effect. Reconciling
// and Stalled are "abnormal-true": True while the controller is working
// (Reconciling) or cannot progress without a change (Stalled). kstatus reads
// an absent abnormal-true condition like a False one; this package removes
// them when they no longer hold rather than keeping them False. Four calls
// cover the states, each setting Ready to match:
//
//	status.MarkReconciling(app, "Progressing", "2/3 replicas ready")             // Reconciling=True, Ready=Unknown
//	status.MarkReady(app, "Deployed", "3/3 replicas ready")                      // Ready=True
//	status.MarkNotReady(app, "Unavailable", "registry: connection refused")      // Ready=False, Reconciling=True
//	status.MarkStalled(app, "Invalid", "spec.port 70000: must be at most 65535") // Stalled=True, Ready=False
//
// # Readiness of children
//
// [ReadinessOf] reads any object, typed or unstructured, the way kstatus
// (sigs.k8s.io/cli-utils/pkg/kstatus) and `kubectl rollout status` do, and
// says whether it is Current (ready), InProgress, Failed or Terminating,
// with a reason and a message that names it and its numbers:
//
//	r := status.ReadinessOf(dep) // {InProgress RollingOut "Deployment web: 1 of 3 replicas updated"}
//	switch r.State {
//	case status.StateCurrent:
//		status.MarkReady(app, "Available", r.Message)
//	case status.StateFailed:
//		status.MarkStalled(app, r.Reason, r.Message)
//	default:
//		status.MarkReconciling(app, "RollingOut", r.Message)
//	}
//
// Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs,
// PersistentVolumeClaims, Services of type LoadBalancer, Pods and
// CustomResourceDefinitions have rules of their own; every other kind is
// read from its kstatus conditions and status.observedGeneration, so a
// child that is itself a custom resource maintained with this package
// reads correctly too. Stalled=True and Reconciling=True are read first on
// every kind, built-in ones included, as kstatus does. A
// CustomResourceDefinition is ready once Established=True, so a parent
// whose child is a CRD does not create custom resources of it too early;
// a names conflict (NamesAccepted=False) is Failed.
//
// Where ReadinessOf departs from kstatus, it does so on purpose, mostly to
// agree with what Helm's and Argo CD's waiters and `kubectl rollout
// status` wait for. The whole list:
//
//	case                                    ReadinessOf              kstatus
//	Job running, started                    InProgress Running       Current
//	Job suspended after it started          InProgress Suspended     Current
//	Job with FailureTarget=True             Failed JobFailed         Current until Failed=True
//	Pod phase Failed                        Failed PodFailed         Current
//	Pod unschedulable for over 15 s         InProgress Pending       Failed
//	Pod init container in CrashLoopBackOff  Failed CrashLoopBackOff  InProgress
//	PersistentVolumeClaim Lost              Failed ClaimLost         InProgress
//	Service LoadBalancer, no address yet    InProgress Pending       Current once it has a cluster IP
//	StatefulSet OnDelete, pods missing      InProgress Scaling       Current
//	StatefulSet pods ready, not available   InProgress Unavailable   Current
//	DaemonSet OnDelete, pods not updated    Current Available        InProgress
//	Deployment counts met, conditions lag   Current Available        InProgress until Available=True
//	Deployment paused, fully rolled out     Current Available        InProgress (Progressing=Unknown)
//	ReplicaSet scaled to 0, status unset    InProgress NoStatus      Current
//	DaemonSet status all zero, typed        InProgress NoStatus      Current (0 of 0)
//	Ready=True for an older generation      InProgress               Current
//	Stalled=True and Reconciling=True       Failed Stalled           the first in the list
//	metadata only, or unreadable status     InProgress               an error
//
// Why, case by case:
//   - A Job is done when it completed: a parent that waits for a migration
//     must not go on while it still runs or is suspended (Helm's
//     --wait-for-jobs and Argo CD agree). FailureTarget=True is the Job
//     controller's own verdict, Failed=True follows once pods are gone.
//   - A failed Pod does not run again, which is what a reader waits for
//     (Argo CD: Degraded). An unschedulable Pod may be scheduled once the
//     cluster autoscaler adds a node, so it stays InProgress, with the
//     scheduler's reason in the message. A container crash-looping is
//     Failed as kstatus and Argo CD say, an init container too (the Pod
//     never starts); it reads Current again once the Pod becomes ready.
//   - A Lost claim's volume is gone: nothing brings it back.
//   - A LoadBalancer Service without an address is not reachable yet
//     (Helm waits for it too); spec.externalIPs make it reachable, so
//     with them it is Current at once, as Helm counts it.
//   - A StatefulSet with OnDelete updates pods only when someone deletes
//     them, so no update is awaited, but its pods must still exist and be
//     available; availability (readiness held for minReadySeconds) is what
//     `kubectl rollout status` waits for, on DaemonSets too, where OnDelete
//     likewise means no update will come by itself.
//   - A Deployment is read from its counts, as `kubectl rollout status`
//     does; its Available and Progressing conditions follow the same
//     counts one sync later. A paused Deployment whose every replica is
//     updated and available has nothing left to roll out, so it is
//     Current; kstatus waits for Progressing=True with reason
//     NewReplicaSetAvailable, which the deployment controller does not
//     set while the Deployment is paused (Progressing=Unknown,
//     DeploymentPaused), so kstatus reads it InProgress until it is
//     resumed. One paused mid-rollout is InProgress ("Paused") in both.
//   - What is not read is not ready: a ReplicaSet whose controller has
//     not written its status (no status.replicas, which it always writes)
//     is InProgress even when scaled to 0, where kstatus, reading absent
//     numbers as 0, calls it Current. A DaemonSet without
//     desiredNumberScheduled is InProgress in both; a typed one whose
//     status is all zero (no observedGeneration either: never written,
//     since the controller always writes it) is InProgress too, where
//     kstatus reads the zeros its conversion writes as "0 of 0". Ready counts are read
//     as kstatus reads them: fewer ready pods or replicas than wanted is
//     InProgress ("NotReady") even when the available count says
//     otherwise.
//   - Ready observed for an older generation says nothing about the
//     current spec; Stalled is the stronger claim of the two.
//   - A status that was not read, or not understood, is not a ready one.
//
// Everywhere else the two agree, Reconciling and Stalled on built-in kinds,
// crash-looping Pods and CustomResourceDefinitions included.
//
// # The outcome of a reconcile
//
// One function decides Ready, Reconciling, Stalled, their
// lastTransitionTime and status.observedGeneration from the outcome of a
// reconcile: [Finish], from the conditions as read ([Begin] takes them and
// removes Reconciling and Stalled, which describe one reconcile), what the
// reconciler set, and its error. kopgo's reconcile loop, reconciler.Sync's
// summary and a plain controller-runtime reconciler all go through it:
//
//	read := status.Begin(&app)
//	err := r.deploy(ctx, &app)        // may MarkReconciling while a rollout goes on
//	status.Finish(&app, read, err)
//
// A nil error is Ready=True (or the reconciler's own Reconciling or
// Stalled report); a terminal error (koperrors.IsTerminal: marked
// Terminal, or the API server's 422 naming a field) is Stalled; any other
// error is Ready=False with Reconciling=True. The reason of an error is
// koperrors.ReasonOf(err): its kind (koperrors.KindOf(err): "NotFound",
// "Invalid", ...), a closed set one can alert on, unless the reconciler
// marked it with a reason of its own (koperrors.WithReason(err,
// "QuotaExceeded")) or it is a provider's 401 turned into an error by
// koperrors.FromHTTP ("Unauthorized"); the message is the error's text,
// which names the operation and the object, cut to the API's 32768-byte
// limit. A requeue is not an
// input: it changes no condition, so Ready reflects the work, not the
// schedule. [SetError] is Begin and Finish in one call, for a reconcile
// that reports nothing but its error (kuberator's WithStatusError).
//
// # Since when not Ready
//
// Ready's lastTransitionTime says since when the object has been Ready,
// or has not been: it is kept when Ready moves between False and Unknown
// (an error during a rollout, a rollout after an error), by [Finish] and
// by [Set] alike, and moves only when Ready becomes True or stops being
// True. The time is then stored on the object, so a restarted operator or
// a new leader reads the same "not Ready since" as the old one, and the
// object-health gauges of github.com/kopgo/kopgo/observability, which read
// nothing else, count an object not Ready for an hour in their 15m bucket
// after a restart too.
//
// Why this rule, and not "Ready stays False while not ready": the
// statuses keep their kstatus meaning (Unknown while work is in progress,
// False when it failed; kstatus itself reads Reconciling and Stalled, not
// Ready's time), and one rule covers both directions, where keeping Ready
// False would still date an error during a rollout (Unknown to False)
// anew. It departs from the letter of metav1.Condition's documentation
// ("the last time the condition transitioned from one status to
// another") for Ready between its two not-True statuses only; every other
// condition, and Ready to and from True, transitions as apimachinery's
// meta.SetStatusCondition does. An object written before this rule
// carries the time of its last False/Unknown move until it becomes Ready.
//
// # Generations
//
// status.observedGeneration == metadata.generation means the controller
// acted on this spec without failing: success (work still in progress
// says so with Reconciling=True), or a terminal failure (then kstatus
// reports Failed, not InProgress). [Finish] maintains it; a retryable
// error leaves it behind, so the object is retried. [IsCurrent] tells whether the
// current generation was handled (kuberator's observed-generation
// pattern), from observedGeneration or, for a type without it, from a
// Ready or Stalled condition observed at this generation.
//
// # Writing status
//
// A [Patcher] snapshots the status when the object is read; [Patcher.Patch]
// compares and sends one server-side apply of the whole status, or nothing
// at all when it is unchanged: no request, no new resourceVersion, no watch
// event, hence no reconcile fed by its own writes.
//
// Why this shape. The status a reconciler writes is computed by changing the
// object it read, so that object is the natural "before", and it costs no
// GET. Taking the snapshot in a constructor (rather than
// Patch(ctx, c, before, after)) means one line at the top of the reconcile,
// a copy of the status alone rather than a DeepCopy of the whole object, and
// a framework can take it before user code runs, as kopgo's reconciler does;
// a plain controller-runtime reconciler uses it the same way. It works for
// typed objects and *unstructured.Unstructured alike.
//
// Why one apply of the whole status. A merge patch of the changed fields
// would do, but server-side apply with a field owner states what the
// controller's status is: scalars and conditions are sent together, so
// neither drops the other, and a condition or field the controller no
// longer sets is removed because it is owned and no longer applied (and a
// condition kopgo owns that another manager wrote is removed too: see
// "Conditions kopgo owns" below; declare
// conditions as a list map keyed by type in the CRD, as controller-gen's
// +listType=map +listMapKey=type does, so each condition is its own field).
// Ownership is forced by default: the object as read already carries the
// other writers' values, so forcing only takes over fields the controller
// puts in its own status. apply.Force(false) turns a conflict into an
// error instead (the same opt-out as for the apply of children, see
// github.com/kopgo/kopgo/apply). A status write never changes
// metadata.generation.
//
// The field owner is given as everywhere in kopgo: a default set where the
// writer is made, here a client made with controller-runtime's
// client.WithFieldOwner (reconciler.Env's Client is), or
// client.FieldOwner per call. Patch takes controller-runtime's
// client.SubResourceApplyOption, client.DryRunAll included.
//
// Make optional nested objects in status pointers with omitempty. A
// non-pointer struct at its zero value is sent as {}, and when the field
// owner owned fields inside it before, the API server stores null, which
// the CRD's schema rejects as Invalid (kubernetes/kubernetes#117447); an
// absent field is removed cleanly. For the same reason Patch sends no
// status key at all, rather than an empty one, when the whole status is
// empty.
//
// # Conditions kopgo owns
//
// Ready, Reconciling and Stalled are the controller's, whoever wrote them
// last: a `kubectl edit` (an Update by the manager "kubectl-edit"), or an
// older version of the operator that wrote status with Status().Update,
// leaves entries that another field manager owns, and leaving a condition
// out of an apply removes only the fields the applier owns alone. So a
// [Patcher.Patch] whose status carries any of the three (every status
// [Finish] decided does) makes sure that, once it returns, the stored
// status holds exactly the ones it sent:
//
//   - those it sends are forced (the default), so their values are the
//     controller's whoever held them;
//   - those it leaves out and that the object still holds after the apply
//     (the apply's response is the stored object, so this costs no read)
//     are removed with one JSON patch, each removal guarded by a "test"
//     that the entry at its index is still of that type; a failed guard
//     (someone changed the conditions in between) is an error of Kind
//     Conflict, retried;
//   - an apply the server refuses as Invalid while it leaves out one of
//     them (an entry whose fields the controller and another manager
//     share: the apply would leave a partial entry that the CRD's schema
//     rejects) is retried once after that JSON patch removed the entries.
//
// Conditions of other types are never touched, whoever owns them, nor is
// any condition when the status sent carries none of the three (a Patcher
// used for status fields alone), or under apply.Force(false) or a dry run.
//
// Why this mechanism. The apply's response tells, without a read and
// whatever the cache keeps of managedFields (kopgo's Builder keeps only
// the controller's own entries), whether an entry survived the apply;
// only then is a second request sent, so the common writes (a condition
// the controller owns alone, added or removed) still cost one request. A
// JSON patch guarded by the entry's type, rather than by the whole
// object's resourceVersion, does not fail because an unrelated field
// changed in between, and never removes an entry it did not mean. A
// merge patch cannot remove one entry of a list map; an Update of the
// whole status would take over every other writer's fields.
//
// # Stale caches
//
// Comparing against the object as read assumes the read includes the
// controller's own previous write. A cache that lags (the object read
// before the watch delivered our last write) could hide a needed write: we
// wrote Y, the stale read shows X, and the reconcile computes X again. The
// package therefore remembers, per object UID, the status of this
// process' last write, the resourceVersion it returned, and the versions
// known to be older: the one it was based on and this process' earlier
// writes of the object (bounded, least recently written forgotten first).
// Two rules use it:
//
//   - The snapshot is not the last write's version and the new status
//     differs from what was written: Patch sends, though the status equals
//     the snapshot (the stale read hid our write).
//   - The snapshot is one of the versions known to be older than the last
//     write, and the new status equals what was written: Patch sends
//     nothing, though the status differs from the snapshot (the server
//     already holds it; the watch event of that write brings a read that
//     includes it, and a later write by anyone else brings another). A
//     cache two writes behind (a large object whose watch events arrive
//     slowly) shows one of our earlier writes: older too.
//
// Without the second rule, each event that arrived between our write and
// its watch event (a child's status, say) re-sent the same status: one
// request per reconcile while the cache lagged, which the server answers
// without a new resourceVersion but answers all the same.
//
// Measured against a real kube-apiserver (see the package tests): the same
// status patched 100 times costs 0 requests, 0 new resourceVersions and 0
// watch events after the first write; a change costs exactly one request.
package status

// Package observability is what an operator touches of kopgo's metrics,
// tracing and events, usable on their own in any controller.
//
// # Metrics
//
// [Metrics] are kopgo's collectors. [Default] registers them on
// controller-runtime's registry, so that they are served next to its own
// on the manager's /metrics endpoint; [NewMetrics] registers them on any
// prometheus.Registerer (a registry of your own, for a handler of your
// own or a push from a Job). The Builder counts into them itself; a plain
// controller-runtime reconciler records its reconciles with
// [Metrics.ObserveReconcile]:
//
//	kopgo_reconcile_total{controller,result}
//	kopgo_reconcile_errors_total{controller,error_kind}
//	kopgo_reconcile_duration_seconds{controller}     histogram, trace IDs as exemplars
//	kopgo_apply_total{controller,outcome}
//	kopgo_gc_deletions_total{controller}
//	kopgo_reconcile_deferred_total{controller,outcome}  outcome deferred or expired
//	kopgo_reconcile_skipped_total{controller,reason}    reason nothing_new, not_due or retry_after
//	kopgo_external_requests_total{controller,operation,outcome}
//	kopgo_external_request_duration_seconds{controller,operation}  histogram
//
// The two kopgo_external series count the calls the external package makes
// to a system outside the cluster ([Metrics.RecordExternalCall]): operation
// observe, create, update, delete or find; outcome success or, for a
// failure, its error_kind (a 429 from a provider read through
// koperrors.FromHTTP is unavailable, a 401 forbidden).
//
// kopgo_reconcile_deferred_total counts reconciles the loop put off
// because the cache still held the object older than this process's last
// write to it (see the reconciler package, "Reading your own writes"):
// outcome "deferred" each time, "expired" when the bounded wait ran out
// and the reconcile ran on what the cache had.
//
// kopgo_reconcile_skipped_total counts wake-ups of an object (a watch
// event, a requeue) that ran no reconcile: nothing changed since the last
// one and no requeue was due (reason "nothing_new": the echo of the
// loop's own write, say), a requeue is due later (a backoff or a
// RequeueAfter that the wake-up did not cut short: "not_due"), or the last
// error's own delay holds ("retry_after"). Such a wake-up makes no write
// and no call, and is not in kopgo_reconcile_total.
//
// Every label value is lower case, from a closed set, never an error
// message, so the number of series stays bounded:
//
//	result       success, requeue, conflict, error, terminal, timeout, panic
//	error_kind   a koperrors.Kind in lower snake_case: internal, not_found,
//	             conflict, forbidden, invalid, timeout, unavailable,
//	             serialization, io, config, already_exists, expired
//	outcome      created, updated, unchanged (kopgo_apply_total);
//	             success or an error_kind (kopgo_external_requests_total)
//	operation    observe, create, update, delete, find
//
// A conflict is counted as a result but not as an error; a timeout and a
// panic are errors. The label is error_kind, not kind, so that it does not
// read as a Kubernetes kind.
//
// # Object health
//
// How many of a controller's objects are Ready, Reconciling and Stalled,
// and for how long the unhealthy ones have been so, kept from the
// conditions the reconcile loop decided: kopgo's loop reports each object
// with [Metrics.ObserveObject] once per reconcile that settled its
// conditions, and [Metrics.ForgetObject] once it is gone; a plain
// reconciler can do the same. The series are computed at a scrape from
// one record per object, and none names an object:
//
//	kopgo_objects{controller,condition,status}                    gauge
//	kopgo_objects_not_ready_longer_than{controller,longer_than}   gauge
//	kopgo_objects_stalled_longer_than{controller,longer_than}     gauge
//	kopgo_objects_oldest_not_ready_timestamp_seconds{controller}  gauge, absent when all are Ready
//	kopgo_objects_oldest_stalled_timestamp_seconds{controller}    gauge, absent when none is Stalled
//
//	condition    Ready, Reconciling, Stalled (as Kubernetes spells them)
//	status       True, False, Unknown (an absent Reconciling or Stalled is
//	             False, an absent Ready is Unknown, as kstatus reads them)
//	longer_than  5m, 15m, 1h, 6h, 24h
//
// Durations run from the condition's lastTransitionTime, which the object
// keeps, and from nothing the process remembers, so they survive a restart
// and a leader handover (Ready's time is that of its last move to or from
// True: kopgo's status package keeps it between False and Unknown). A process serves
// a controller's health series from its first report on: a standby
// replica serves none, and a new leader's gauges fill as it reconciles the
// objects its informer lists. [Metrics.ForgetController] drops a
// controller's series when it stops in a process that keeps running; a
// controller of kopgo's Builder does it itself once its manager has
// stopped and its reconciles in flight have returned.
//
// Opt-in, [Metrics.RegisterObjectSeries] adds one series per unhealthy
// object (kopgo_object_not_ready_since_timestamp_seconds and
// kopgo_object_stalled_since_timestamp_seconds, labelled controller,
// namespace and name), for an alert or a table that names the objects.
//
// # Tracing
//
// With a TracerProvider (controller.Builder.TracerProvider), every
// reconcile is a span ("reconcile <Kind>") with child spans for the work
// inside (apply, finalizers, gc collect, gc delete); without one, tracing
// costs nothing. OpenTelemetry's
// semantic conventions have no attributes for an arbitrary Kubernetes
// object (k8s.pod.name and the like exist for particular kinds, as
// resource attributes naming where telemetry comes from;
// k8s.namespace.name is the namespace the operator itself runs in, to set
// on its Resource), so the spans name the object under kopgo's namespace:
//
//	kopgo.controller          controller name
//	kopgo.object.kind         the object's Kind
//	kopgo.object.namespace    its namespace (empty if cluster-scoped)
//	kopgo.object.name         its name
//	kopgo.object.uid          its UID (reconcile spans)
//	kopgo.object.generation   its metadata.generation (reconcile spans)
//	kopgo.result              the reconcile's result, as the metric's label
//
// # Events
//
// [Recorder] emits events.k8s.io/v1 events in one call per event:
// Normal(obj, related, reason, action, note) and Warning(...), related
// being a second object the event names, or nil. Emitting never blocks
// or fails the caller. [FakeRecorder] keeps events in memory for tests.
// An [EventRecorder] writes them to the API server; make it from a
// manager with [NewRecorder], or from a *rest.Config with
// [NewRecorderForConfig] where there is no manager (a CLI, a Job, a
// test).
//
// The caller names the reporter. The second argument of both
// constructors is the events' reportingController, a qualified name
// ("webapp-controller", "example.com/webapp"; anything else is refused
// when the recorder is made, since the API server would refuse every
// event). Pass the name the controller writes with, its field owner, so
// that events, applies and status writes name it alike. The
// reportingInstance, the replica that reports, defaults to that name, a
// dash and the host name (the pod's name in a cluster);
// [WithReportingInstance] sets it.
//
// # Series
//
// Repeats fold into one Event with a series count, as events.k8s.io/v1
// defines them: a repeat is an isomorphic event, about the same object (at
// the same resourceVersion), with the same related object, type, reason,
// action and note. An event with another note is another event: "Job
// migrate-1 created" and "Job migrate-2 created" under one reason are two
// Events, each with its own count. A note longer than the API's 1024 bytes
// is cut (and notes that agree up to the cut are repeats), and an object
// name too long to prefix the Event's name is shortened in it. The
// recorder remembers up to 4096 series; past that the one seen least
// recently is forgotten, and a repeat of it starts a new Event.
//
// The recorder writes the count itself rather than through client-go's
// events broadcaster (which the manager's GetEventRecorder uses): that
// broadcaster writes a series when its count reaches 2 and then only after
// six quiet minutes, and drops what it holds when it shuts down, so a burst
// of 10 showed a count of 2 for minutes, or 1 after a restart. Here the
// first occurrence is written at once, the count of a repeating event at
// most every 30 seconds, and every pending count when the manager stops
// and at [EventRecorder.Shutdown].
//
// # Lifecycle
//
// The recorder writes from a worker goroutine that runs only while
// something is left to write, and ends when nothing is: a recorder holds
// no goroutine while idle, and one nobody shuts down (a controller added
// to a manager with Builder.Setup) keeps neither a goroutine nor, through
// its client, a stopped manager's cache alive.
//
// A recorder made by [NewRecorder] is a Runnable of its manager. When the
// manager stops, it writes every pending count, for at most 2 seconds,
// so that event counts never eat the graceful-shutdown window reconciles
// drain in (with a healthy API server that is a few hundred writes); from
// then on every event, from reconciles still draining, is written at
// once, one attempt each. [EventRecorder.Shutdown] writes what is still
// pending, within its context, and stops the recorder for good: call it
// after the manager's Start returns (Builder.Run does), and before a
// program using [NewRecorderForConfig] exits.
package observability

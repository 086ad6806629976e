// Package controller is kopgo's controller Builder: it wires a
// reconciler.Reconciler into controller-runtime, either in a manager it
// builds and runs itself ([Builder.Run]) or in an existing one
// ([Builder.Setup]).
//
// Import it as kopcontroller, since controller-runtime has a controller
// package too; kopgo's own code does:
//
//	import kopcontroller "github.com/kopgo/kopgo/controller"
//
//	err := kopcontroller.New[*v1.WebApp]("webapp", &WebAppReconciler{}).
//		Scheme(scheme).
//		HealthPort(8081).
//		MetricsPort(8080).
//		LeaderElection("webapp-system", "webapp-leader").
//		GracefulShutdown(30 * time.Second).
//		ReconcileTimeout(time.Minute).
//		Concurrency(4).
//		Owns(&appsv1.Deployment{}).
//		Watch(&corev1.Secret{}, owners.LabelMapper("example.com/webapp")).
//		Run(ctx)
//
// # What Run wires
//
//   - /healthz and /readyz on [Builder.HealthPort]: ready once the caches
//     synced, and unready while the API server does not answer.
//   - /metrics on [Builder.MetricsPort], with controller-runtime's series and
//     kopgo's (see the observability package); TLS and authn/authz through
//     controller-runtime's metrics server options.
//   - Lease-based leader election, released on shutdown so that a successor
//     takes over at once instead of after the lease expires.
//   - Graceful shutdown: when ctx ends (SIGTERM via ctrl.SetupSignalHandler),
//     no new work starts and in-flight reconciles keep their context for
//     the grace period (30 s by default) minus a few seconds kept to record
//     their outcome; one cut short writes nothing into status. Run returns
//     nil. A reconcile that ignores its context's cancellation holds the
//     stop until it returns or the window ends (then Run returns
//     controller-runtime's error about the window), unless a
//     [Builder.ReconcileTimeout] is set: then it is left running one second
//     after its context ended, and the stop goes on.
//   - Retries: failures back off per object (5 ms doubling to 5 minutes,
//     under a token bucket of 10 per second, bursts of 100: controller-
//     runtime's schedule); failures because the API server is away back
//     off at most 3 s, so recovery after an outage takes seconds; a delay a
//     reconciler returns with its failure, or its ErrorPolicy's, is used as
//     it is. A Stalled object (a terminal failure) is not retried with
//     backoff: it is reconciled again when it changes, when the reconciler
//     asked for a requeue, and after [Builder.StalledRetry] (10 minutes)
//     anyway. [Builder.ControllerOptions] can replace the rate limiter,
//     losing those rules.
//   - Concurrency: 4 objects at once ([Builder.Concurrency]); a reconcile
//     that ignores its context past its deadline
//     ([Builder.ReconcileTimeout]) frees its worker.
//   - Deletions: a reconciler with a Cleanup hook (reconciler.Finalizer)
//     gets the Builder's finalizer ([Builder.FinalizerName]), and an object
//     the API server deleted past that finalizer (kubernetes#77988) still
//     gets its Cleanup, with its last known state, from the delete event.
//
// # Running in your own manager
//
// [Builder.Setup] adds the controller to a manager you made (a kubebuilder
// project's main.go): the same loop, rate limiter, watches and Env, without
// the probes, metrics server and leader election, which are the manager's.
// It is the one way to run a reconciler.Reconciler in controller-runtime;
// [Builder.WithWatches] reaches controller-runtime's builder for what the
// Builder does not offer.
//
// One difference costs requests: a reconciler.Syncer reads a new child's
// name from the API server before creating it (one get per new child),
// unless the cache of the child's kind is complete (reconciler.Env's
// CompleteKinds), because an object someone else made is missing from a
// cache filtered by a label, field or namespace selector, and the child's
// forced apply would overwrite it. Run builds the manager, with no
// selector on any kind but the reconciled one, and declares the kinds it
// watches complete itself. Setup cannot see your manager's cache options:
// if they leave a child kind unfiltered in the namespaces your children
// live in, say so with [Builder.CompleteCache] (or [WithCompleteCache] for
// EnvFor), and a new child costs its apply alone:
//
//	kopcontroller.New[*v1.Shop]("shop", sync).CompleteCache(&appsv1.Deployment{}, &corev1.Service{}).Setup(mgr)
//
// # kopgo's helpers in a plain controller-runtime reconciler
//
// [EnvFor] builds, from a manager and a field owner, the Env the Builder
// gives a Reconciler: a client writing as the field owner, an uncached
// reader, an event recorder, the scheme and an Applier. A kubebuilder
// reconciler calls it in its SetupWithManager and keeps the Env, so the
// scaffolded main.go and suite_test.go, which construct the reconciler
// with only Client and Scheme, stay as they are:
//
//	env, err := kopcontroller.EnvFor(mgr, "cronjob-controller", kopcontroller.WithCachedKinds(&batchv1.Job{}))
//
// The Builder builds its Env with EnvFor too. [WithCachedKinds] names the
// kinds the Applier may read from the manager's cache: the Builder names
// those it watches; a plain reconciler names the kinds of its For, Owns
// and Watches (see EnvFor for why nothing else is read).
//
// # What triggers a reconcile
//
// A change to the object (its spec, labels, annotations, the controller's
// own finalizer, or its deletion), to a child declared with Owns, to an object
// watched with Watch or named by the object ([Builder.References]), and
// the informers' periodic resync. An update that
// changes only the object's status does not: the reconciler's own status
// write would come back as a second, idle reconcile per change (and, for a
// Stalled object, a second failure in the logs). This is java-operator-sdk's
// generation-aware default. Kinds without metadata.generation (ConfigMap,
// Secret, Service) have every update kept: their data changes leave
// generation alone. [Builder.Predicates] replaces the filter, and
// Predicates() with no argument drops it, for a reconciler that must react
// to status written by someone else; then every new resourceVersion of
// the object runs the reconciler, the echo of its own status write
// included (one more call per change, which writes nothing). Other
// controllers' finalizers and owner references, and metadata the API
// server moves (managedFields), pass the filter but run nothing: the
// object's state, not the event, decides (next paragraph).
//
// Every event that passes the filter reaches the queue; whether it runs
// the reconciler is decided from the object's state (the reconciler
// package, "What wakes an object"): the echoes of the controller's own
// writes (its finalizer, its status, the reconciler's annotations through
// Env.Client, the children Env.Applier wrote) run nothing, and cut no
// backoff or RequeueAfter short, while a change by anyone else runs at
// once, even when it reaches the informer merged with one of ours after
// a relist.
//
// The child kinds of a reconciler that implements reconciler.Owner (a
// reconciler.Syncer does) are watched as if given to [Builder.Owns], and
// indexed by controller so that Sync reads a parent's children, not the
// namespace. The Applier in the reconciler's Env reads from the cache
// only the kinds watched here (the primary kind, Owns, Watch, the Syncer's
// child kinds); it applies other kinds without reading, so a controller
// needs no list or watch permission on kinds it only writes.
//
// # Objects a primary references
//
// A primary often names other objects: a Secret with credentials, a
// ConfigMap, another custom resource. It must be reconciled when one of
// them changes, appears (a Secret created after the primary that names
// it) or goes away. [Builder.References] says which, with a function from
// the primary to the names:
//
//	kopcontroller.New[*v1.Database]("database", r).
//		References(&corev1.Secret{}, func(db *v1.Database) []string { return []string{db.Spec.CredentialsSecret} }).
//		Run(ctx)
//
// The Builder registers a field index on the primaries in the manager's
// cache (mgr.GetFieldIndexer(), under Run and Setup alike) from the names
// to the primaries that return them, and watches the kind: each event of
// an object of it (create, update, delete) lists the primaries that name
// it from that index, without a request, and reconciles each at once. A
// primary that names another object is indexed anew when it changes, so
// its old one wakes it no more. These events do not pass through the
// primary's filters (the status-only filter and the loop's own-write
// filter apply to the primary's own events), so none is dropped. Each
// call has its own index, named after the controller and the call: two
// kinds, or one kind named in two fields, compose.
//
// The watch is metadata-only (PartialObjectMetadata): the cache holds the
// names, labels, annotations and versions of the Secrets, never their
// data. The reconciler reads the one it needs through Env.Client, with
// one get to the API server: under Run the manager's client is made with
// the kind's cache disabled (client.CacheOptions DisableFor); under Setup
// the Builder cannot change your manager's client, so the Env it gives
// the reconciler routes reads of the kind to the manager's uncached
// reader (what Env.Reader is) itself. The same reconciler reads live under
// both. Reading the kind from the manager's cache instead would start a
// second, full informer beside the metadata one (every Secret's data in
// the operator's memory), and the two caches would disagree for a moment:
// a Secret whose deletion woke the primary could still be read from the
// other. When the controller also watches the kind in full (Owns, Watch,
// a Syncer's child kinds), that cache exists anyway, and reads of the
// kind use it. Under Setup, other readers of your manager's client
// (mgr.GetClient()) are not changed.
//
// Names are in the primary's namespace. This is Kubernetes' own rule for
// references without a namespace (a Pod's secretKeyRef, an Ingress's TLS
// secretName): whoever may create a primary in a namespace can make the
// operator read and wait on objects of that namespace only, never on
// another namespace's Secret (crossing namespaces takes a grant, as the
// Gateway API's ReferenceGrant). A cluster-scoped primary has no
// namespace, so its names are of cluster-scoped objects (a Tenant naming
// its Namespace); References of a namespaced kind for it is a mistake,
// returned by Setup and Run, since no event of that kind could match it.
// A cluster-scoped primary that names a Secret in some namespace crosses
// namespaces by design: give it a [Builder.Watch] with a mapper of your
// own. A cluster-scoped kind (Namespace, ClusterRole) is named by name
// from any primary, namespaced or not.
//
// # Webhooks
//
// [Builder.Webhooks] serves typed defaulting (admission.Defaulter[T]),
// typed validation (admission.Validator[T]) and conversion between T's
// versions (hub/spoke functions through controller-runtime's
// conversion.NewHubSpokeConverter), with controller-runtime's own
// handlers, at the paths its webhook builder uses
// (/mutate-<group>-<version>-<kind>, /validate-..., /convert):
//
//	kopcontroller.New[*v1.WebApp]("webapp", r).
//		Webhooks(kopcontroller.Webhooks[*v1.WebApp]{
//			Defaulter: webAppDefaulter{},
//			Validator: webAppValidator{},
//			Converter: conversion.NewHubSpokeConverter(&v1.WebApp{},
//				conversion.NewSpokeConverter(&v1alpha1.WebApp{}, v1.ToV1alpha1, v1.FromV1alpha1)),
//			Service: &kopcontroller.WebhookService{Namespace: "webapp-system", Name: "webapp-webhooks"},
//		}).
//		Run(ctx)
//
// Certificates are the operator's own, with no volume, no cert-manager
// and no restart: a CA kept in a Secret ([Webhooks.CASecret], default
// "<controller name>-webhook-ca" in the Service's namespace) read and
// written through the API server, serving certificates signed in memory
// and picked at each TLS handshake. Every replica runs the same (neither
// the certificates nor the server are leader-elected), and replicas
// starting together agree on one CA. Serving certificates are renewed
// at 2/3 of their week; a CA at 2/3 of its year, in three steps: its
// successor is trusted first (added to the caBundle), signs an hour
// later, and the old CA leaves the caBundle once the last certificate it
// signed expired, so the API server trusts every certificate it meets
// while it rotates.
//
// When the caBundle changes, and again every minute (so that a
// configuration deleted by hand, or a spec.conversion that a later apply
// of the CRD's manifest reverted, is back within a minute: a few
// server-side applies per replica and minute, which the API server
// finds unchanged and does not store), it is written where the API
// server reads it, by server-side apply with the field owner
// "<field owner>-webhooks", forced:
//
//   - a MutatingWebhookConfiguration (with a Defaulter) and a
//     ValidatingWebhookConfiguration (with a Validator), each named after
//     the controller, with one webhook for T's resource: CREATE and
//     UPDATE (DELETE too if the Validator is a [DeleteValidator] that
//     asks), sideEffects None (server-side dry runs go through it),
//     admissionReviewVersions v1, failurePolicy Fail, the clientConfig
//     ([Webhooks.Service], or [Webhooks.URL] for tests and an operator
//     run outside the cluster) and the caBundle. The rule names T's
//     version, and matchPolicy Equivalent extends it to every version
//     of the resource: the API server sends the object converted to T's
//     version, the one the typed handlers decode.
//   - the CRD's spec.conversion (with a Converter): strategy Webhook,
//     the clientConfig, the caBundle, conversionReviewVersions v1.
//
// Who owns what: the configurations are wholly the operator's. Of the
// CRD, only spec.conversion is taken; a CRD installed by kubectl or Helm
// keeps every other field and its owner. Leave spec.conversion out of
// the manifests (a later apply of one that sets it would take it back
// until the next minute's write). The configurations carry an
// ownerReference to the CRD: deleting the CRD deletes them. Uninstalling
// the operator and keeping the CRD leaves them in place, and with
// failurePolicy Fail creates and updates of T are refused until the
// operator is back: no object goes in unchecked. To remove the operator
// for good, delete the configurations (and the CA Secret) too.
//
// /readyz answers 503 until the webhook server answers TLS and the first
// caBundle is written, so a Service sends no request to a replica that
// cannot serve it. Under Run it is the Builder's probe; under Setup a
// readyz check "webhooks-<controller name>" is added to your manager.
// Either way, the Builder runs a webhook server of its own on
// [Webhooks.Host] and [Webhooks.Port] (9443 by default), not your
// manager's mgr.GetWebhookServer(): that one serves your other webhooks
// with the certificates it was made with, and a webhook.Server's TLS
// configuration cannot be changed once made. Under Setup, give the two
// different ports.
//
// RBAC, beyond the controller's: get, create and update on secrets in
// the CA Secret's namespace; get and patch on customresourcedefinitions
// (get for the owner reference, patch for spec.conversion); create and
// patch on mutatingwebhookconfigurations and
// validatingwebhookconfigurations (admissionregistration.k8s.io).
//
// # Permissions
//
// What a controller run by the Builder asks of the API server, as RBAC
// rules (the examples' +kubebuilder:rbac markers are complete lists: their
// end-to-end tests run each operator as a user bound only to them, and a
// missing or unused rule fails the test):
//
//   - Its own kind: list and watch (the cache); patch (the finalizer);
//     patch on its status subresource (status is written with
//     server-side apply); update on its finalizers subresource when its
//     children's owner references block its deletion (the default).
//   - get on its own kind is optional: after an error that may mean the
//     object was deleted, the loop reads it from the API server, and reads
//     the cache instead when get is refused.
//   - Each child kind: list and watch (Owns, a Syncer's kinds: the cache),
//     create and patch (server-side apply creates an object with a patch,
//     and the API server asks for create too), delete where children are
//     pruned (gc, Sync). get where a Syncer must read a child the cache
//     cannot answer for: under Setup without [Builder.CompleteCache], one
//     get per new child (a list by name when get is refused).
//   - Each kind given to [Builder.References]: list and watch (the
//     metadata-only watch; RBAC has no metadata-only verb, so the rule
//     would let the operator list the data too, though it never asks for
//     it), and get (the reconciler's reads).
//   - events.k8s.io events: create and patch, in the namespaces of the
//     objects events are about.
//   - Leader election: get, create and update on coordination.k8s.io
//     leases in its namespace (and create on core events there).
//   - The metrics endpoint's authentication and authorization (the
//     default, see [Builder.MetricsPort]): create on
//     authentication.k8s.io tokenreviews and authorization.k8s.io
//     subjectaccessreviews.
//
// # Mistakes
//
// A nil reconciler, an invalid label selector, a concurrency below 1, the
// same port for health and metrics, a References of a nil kind or with a
// nil name function, a [Webhooks] without handlers or address (each
// naming its field): each is recorded when the method is called and
// returned, joined, by Run or Setup as an error of Kind Config. What needs
// the scheme or the API server is found by Run or Setup, as an error of
// the same Kind: a References kind the scheme does not know, the
// controller's own kind, a namespaced kind for a cluster-scoped primary.
// The Builder never panics.
package controller

// Package external runs an operator of a resource outside the cluster (a
// DNS record, a bucket, a managed database, a SaaS account) from the calls
// to the external system alone. Implement a [Client] (Observe, Create,
// Update, Delete, and optionally Find) for your custom resource, and run
// [New]'s [Reconciler] with kopgo's controller Builder like any reconciler:
//
//	connect := func(ctx context.Context, rec *v1.DNSRecord, env *reconciler.Env) (external.Client[*v1.DNSRecord], error) {
//		var secret corev1.Secret
//		key := client.ObjectKey{Namespace: rec.Namespace, Name: rec.Spec.SecretRef.Name}
//		// Live under References: Env.Client reads the Secrets it names from the API server.
//		if err := env.Client.Get(ctx, key, &secret); err != nil {
//			if apierrors.IsNotFound(err) {
//				err = koperrors.WithReason(koperrors.Terminal(err), "SecretNotFound")
//			}
//			return nil, err
//		}
//		return &dnsClient{url: providerURL, token: string(secret.Data["token"])}, nil
//	}
//	err := kopcontroller.New[*v1.DNSRecord]("dnsrecord", external.New(connect, external.WithPeriod(time.Minute))).
//		References(&corev1.Secret{}, func(r *v1.DNSRecord) []string { return []string{r.Spec.SecretRef.Name} }).
//		Run(ctx)
//
// The Reconciler owns what every such operator needs and gets wrong by
// hand: the resource's identity on the object, recorded so that no crash
// duplicates or leaks it, and checked so that no edit or copy of the
// object orphans or steals it; drift checks on a period, spread over it; a
// deletion that waits until the resource is gone, sending one DELETE; the
// system's limits (a deadline on every call, its Retry-After, a rate
// limit); conditions and events. docs/external.md walks through the
// example operator (examples/dnsrecord) built on it.
//
// Besides Find, a Client may implement optional methods, each found on its
// method set: [Finder] (resolve creates of unknown outcome, check
// identity), [Validator] (check the spec before any call), [SystemNamer]
// (name the system its limits apply to) and [Credentialed] (re-check at
// once when its credentials change). An [Observation] may report Key (whose
// resource it is) and Deleting (a deletion under way).
//
// # Identity, and a create that survives any crash
//
// The resource's ID lives on the object, in the [NameAnnotation]
// annotation (metadata, not status: status is for what can be observed
// again, and a status write lost in a crash would lose the ID). A create
// goes in three steps, each on the API server before the next begins:
//
//  1. [PendingAnnotation] is set on the object (with optimistic locking:
//     a reconcile on a stale object fails here, before anything is asked of
//     the system);
//  2. Client.Create is called with the object's UID as key;
//  3. the ID is written to [NameAnnotation] and the pending mark removed in
//     one patch (retried on conflicts with other writers: the ID is never
//     dropped for a spec edit made meanwhile).
//
// A process killed between 2 and 3 leaves the pending mark and no ID: the
// create's outcome is unknown. The next reconcile (in any process) resolves
// it through the Client's [Finder]: the resource found by the key is
// recorded; none found means none was made, and it is created. A client
// without a Finder cannot know, and the object is Stalled with reason
// CreateOutcomeUnknown and a message that says what to check: set
// [NameAnnotation] to the ID of the resource you find to adopt it, or
// remove [PendingAnnotation] to create it again. The Reconciler never
// creates twice blindly. A Create that fails with a terminal error (the
// system refused it) made nothing: the mark is removed. Any other failure
// may have come after the write (a gateway's 502, a connection reset): with
// a Finder the mark stays and Find is asked before creating again; without
// one, a Timeout leaves the outcome unknown, as a crash does, and any other
// error is taken as "not created" (the mark is removed and the create
// retried), which duplicates the resource if the system failed after
// writing: give your Client a Find.
//
// Adoption works the same way outside a crash: an object created with
// [NameAnnotation] already set takes over that resource (Observe, then
// Update if it differs) instead of creating one.
//
// # Identity, checked
//
// The annotation is the user's to edit, so the Reconciler does not trust
// it blindly. With a [Finder]:
//
//   - before any create without a recorded ID (a new object, the
//     annotation removed, a resource observed gone), Find is asked: a
//     resource made for the object (found by its key) is recorded again,
//     with a Found event, instead of a second one created. This costs one
//     Find per create;
//   - when the recorded ID changes under a running process (the annotation
//     edited), Find is asked: if it finds another resource made for the
//     object, the object is Stalled with reason ExternalNameConflict,
//     naming both IDs (set the annotation back, or delete the object's
//     own resource at the provider first), so that the edit cannot orphan
//     it;
//   - Cleanup of an object without the annotation asks Find, and deletes
//     what it finds; so does Cleanup after the recorded resource is gone
//     (an ID edited to a typo: the typo is gone, the object's own resource
//     is found and deleted).
//
// An [Observation] may carry the resource's Key (its tag). A Key other than
// the object's says the resource was made for another object (a manifest
// copied with the annotation): the object is Stalled with reason
// ExternalResourceOfAnotherObject, naming both objects (the other found
// by its UID among the objects this controller sees), and the resource is
// never updated, adopted or deleted through it; deleting such an object
// leaves the resource in place (a Warning event NotDeleted). An empty Key
// (unknown, or a resource made outside kopgo) can be adopted. To adopt a
// resource made for an object that no longer exists, use a Client that
// reports no Key for it.
//
// # Drift checks, spread over the period
//
// An object whose resource is recorded, Ready for its current generation,
// is checked (Observe, and Update when it differs, Create again when it is
// gone) once per period ([WithPeriod], 5 minutes by default) and not in
// between: a reconcile woken by anything else (a label, a Secret, a resync)
// makes no call. Each object has its own slot within the period, from a
// hash of its UID, so that the checks of many objects are spread evenly
// over it: with 500 objects and a 1-minute period a provider sees about
// 8 Observe calls a second, never the 500 at once that a common timer
// would send. A restarted process does not check every object at once
// either: an object that is Ready waits for its slot. An object that is
// not Ready (a failed call, a resource not ready yet, a new generation) is
// checked on every reconcile, and a resource reporting NotReady is looked at
// again after a twentieth of the period (between 1 and 30 seconds).
//
// Credentials changed: a Client that is [Credentialed] reports an identity
// of its credentials (a hash of the token, a Secret's resourceVersion).
// A Ready object woken for any reason (a Secret it names through the
// Builder's References, a label) is connected again (connect runs: a
// Secret read, no call to the system), and checked at once if its
// credentials differ from those of its last check: a revoked token shows
// Stalled (Unauthorized) when its Secret changes, not at the next slot,
// and objects naming another Secret get no call. The identity is
// remembered by the process: after a restart, an object's first check is
// at its slot, as before.
//
// A reconcile runs only when something is new or due (the reconciler
// package, "What wakes an object"): the echoes of the Reconciler's own
// annotation writes run nothing, a failed call is tried again after its
// backoff, and a call the system answered with Retry-After (a 429, a 503
// through koperrors.FromHTTP) is not repeated before it ends, whatever
// wakes the object. A create refused for good (a 401) is tried once per
// change of the object.
//
// Drift is corrected within one period of the change, plus at most a
// quarter period after a reconcile out of turn (a slot less than a quarter
// period away is skipped), plus the calls' own latency. A resource missing
// within a minute of this process's create of it (or within the period, if
// that is shorter) is taken for one an eventually consistent system does
// not show yet: it is waited for, not created again.
//
// # Deletion
//
// Cleanup (the Reconciler is a reconciler.Finalizer: kopgo's finalizer is on
// the object before the first create) deletes the resource and reports done
// only once the system no longer has it. Deletion is a state: each pass
// observes first; a resource gone (Exists false, or a NotFound) is done; one
// the system is deleting ([Observation].Deleting: a DELETE answered 202,
// then "deleting") is waited for; only a resource that exists and is not
// being deleted gets a DELETE, then an Observe (a synchronous system is
// done in one pass). A resource still shown after its DELETE (by a Client
// that does not report Deleting) gets no second DELETE within a period: one
// DELETE per object, so that the system never answers 409 or 400 to a
// repeated one. While it waits the object shows Reconciling with reason
// Deleting and is looked at again after a tenth of the time its deletion
// has taken so far, at least a second and at most a twentieth of the period
// (between 1 and 30 seconds): a deletion of seconds is seen done within a
// second of the system's 404, one of ten minutes costs a call every minute
// or less, not one a second.
// A pending create is resolved first, as above (so that a resource made
// just before a crash is deleted too). A deletion inside a Retry-After
// calls nothing before it ends. Validation ([Validator]) is skipped, so
// that an invalid object can always be deleted.
//
// Cleanup needs the credentials connect reads: if the Secret is deleted
// with the object (a namespace deletion), the object is Stalled naming the
// Secret until it is back or a person removes the finalizer, knowing that
// the resource stays behind. An object with nothing recorded (no ID, no
// pending create) whose connect fails is let go.
//
// [WithDeletionPolicy]([Orphan]) leaves every resource in place: Cleanup
// calls nothing (connect included) and emits an Orphaned event naming the
// resource; the default is [Delete].
//
// # The system's limits
//
// A provider limits its callers per account, not per object. Each Client
// may name its system ([SystemNamer]: an endpoint and an account; all of a
// Reconciler's clients are one system otherwise), and per system:
//
//   - every call has a deadline ([WithCallTimeout], 30 seconds by
//     default). A call past it fails as a koperrors.Timeout whose outcome
//     is unknown (a create is then resolved as after a crash); the object
//     shows Reconciling with a message naming the call ("external observe
//     of Widget default/w: no answer within 30s"). The call runs in a
//     goroutine of its own, so a Client that ignores its context cannot
//     hold a worker: the other objects go on, and the hung object gets no
//     other call until that one returns;
//   - a Retry-After on an Unavailable answer (a 429 or a 503 through
//     koperrors.FromHTTP) holds every call to that system, whatever object
//     makes it, until it ends: a call held so fails as Unavailable (the
//     object shows Reconciling naming the system and the call that got the
//     Retry-After) and is tried again when it ends. Any Retry-After holds
//     the object that got it, deletion included;
//   - [WithRateLimit](perSecond, burst) spaces the calls (none by
//     default): a call waits its turn, so that the system sees at most
//     perSecond+burst calls in any second from this process.
//
// # Checking the spec
//
// A Client that is a [Validator] has its Validate called after connect and
// before any call to the system: an error Stalls the object (reason
// InvalidSpec, or the one the error carries; the message names the object
// and, from Validate's message, the field) with no call made, until the
// object changes. For rules the API server can check itself (required
// fields, ranges, immutable fields through CEL's oldSelf), prefer the
// CRD's validation: the object is then refused before it is stored.
//
// # Errors and conditions
//
// Errors from the Client and from connect are the reconcile's: a
// terminal one (koperrors.Terminal; from koperrors.FromHTTP: a 400, 401,
// 403 or 422 and any 4xx its table does not retry, an unfollowed redirect
// and a write re-sent as a GET; a 403 with Retry-After, 404, 409, 412 and
// 429 are not terminal) shows Stalled with its reason (koperrors.WithReason, "Unauthorized" for a
// 401), is not retried with backoff, and is looked at again when the object
// or a Secret it references changes (the Builder's References); any other
// is retried with backoff, never sooner than a provider's Retry-After.
// Ready=True once the resource exists, matches the spec and is ready;
// Reconciling with reason Provisioning while it reports NotReady.
//
// # Events and metrics
//
// Normal events with reasons Created, Found (a resource made for the
// object recorded again), Updated, DriftCorrected (a resource changed or
// deleted behind the operator's back, put back), Deleted and Orphaned;
// a Warning event NotDeleted for a resource of another object left in
// place at deletion. The Reconciler's own condition reasons: Provisioning
// and Deleting (Reconciling), CreateOutcomeUnknown, ExternalNameConflict,
// ExternalResourceOfAnotherObject and InvalidSpec (Stalled).
// Every call is counted in kopgo_external_requests_total{controller,
// operation,outcome} with its latency in
// kopgo_external_request_duration_seconds (see the observability package),
// and traced as a child span "external <operation>" of the reconcile's.
//
// # Why this shape
//
// Crossplane's managed reconciler (an ExternalClient with Observe, Create,
// Update, Delete; the identity in an external-name annotation; a
// create-pending mark) and java-operator-sdk's external dependent resources
// are the models. kopgo departs from them in three ways: a create whose
// outcome is unknown is resolved by a find-by-key call rather than only
// flagged; checks are placed in per-object slots, not jittered at random,
// so that the load stays flat after a restart and no call is made while
// nothing is due; and the conditions are kopgo's kstatus ones, kept by the
// same function as every other kopgo controller's.
package external

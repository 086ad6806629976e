package external

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Client is the calls to the external system for one object of type T,
// the only code an operator of an external resource writes. The
// [Reconciler] decides which to call and when; each call gets the object as
// read from the cache (its spec is what the resource should look like) and
// the resource's ID, as recorded on the object ([NameAnnotation]).
//
// Return errors of kopgo's kinds (koperrors.FromHTTP turns a provider's
// HTTP answer into one, with its Retry-After): a terminal error is a
// verdict (the object shows Stalled, with the reason given through
// koperrors.WithReason), any other is retried with backoff, no sooner than
// the delay the error carries.
type Client[T client.Object] interface {
	// Observe reports the resource with the given ID: whether it exists,
	// whether it matches obj's spec, and whether it is ready. Report
	// Exists false only when the system says so (a 404): the Reconciler
	// then creates the resource again. When unsure, return an error.
	// Observe may record what it sees in obj's status (an address, a
	// state): the reconcile loop writes the status afterwards.
	Observe(ctx context.Context, obj T, id string) (Observation, error)
	// Create creates the resource that obj describes and returns its ID.
	// key identifies obj across crashes (its UID): tag the resource with
	// it, or send it as the request's idempotency key, so that a [Finder]
	// can find the resource again. A terminal error (the system refused:
	// koperrors.FromHTTP's terminal 4xx and redirects) means nothing was
	// created. Any other error
	// may have come after the write (a 502 from a gateway, a connection
	// reset after the request was sent): with a [Finder] the Reconciler
	// asks Find before creating again; without one it takes only a Timeout
	// as an unknown outcome, and any other error as "not created", which
	// can duplicate the resource when the system failed after writing.
	Create(ctx context.Context, obj T, key string) (id string, err error)
	// Update makes the resource match obj's spec.
	Update(ctx context.Context, obj T, id string) error
	// Delete deletes the resource. An error of kind NotFound (a 404 read
	// through koperrors.FromHTTP) means it is already gone.
	Delete(ctx context.Context, obj T, id string) error
}

// Finder is an optional method of a [Client]: Find returns the ID of the
// resource created for obj with the given key (see [Client.Create]), or ""
// when there is none. With it, a create whose outcome is unknown (the
// process died between the system's answer and the ID's recording) is
// resolved without a person: the Reconciler records the resource found, or
// creates it when none was. Without it such an object is Stalled until a
// person says which (see the package documentation).
type Finder[T client.Object] interface {
	Find(ctx context.Context, obj T, key string) (id string, err error)
}

// Observation is what [Client.Observe] saw of the external resource.
type Observation struct {
	// Exists is false when the resource is gone: the Reconciler creates
	// it again (or, during deletion, reports the deletion done).
	Exists bool
	// UpToDate is false when the resource differs from the object's spec:
	// the Reconciler calls Update.
	UpToDate bool
	// NotReady, when not empty, says why the resource exists but cannot
	// be used yet (provisioning, "database starting"): the object shows
	// Reconciling with it as message, and is checked again soon.
	NotReady string
	// Deleting is true when the system is deleting the resource (it
	// accepted a DELETE and has not finished: a 202, then a "deleting"
	// state). The Reconciler sends no DELETE for it, waits while it
	// deletes, and during deletion reports done once it is gone.
	Deleting bool
	// Key is the key the resource was created with (see [Client.Create]:
	// its tag or idempotency key), when the system reports it; "" when
	// unknown, or for a resource made outside kopgo. A Key other than the
	// object's is a resource made for another object (a manifest copied
	// with [NameAnnotation]): the Reconciler refuses it, never updating,
	// adopting or deleting it through this object. Report it whenever the
	// system can.
	Key string
}

// SystemNamer is an optional method of a [Client]: System names the
// external system the client talks to, as far as its limits go (an
// endpoint and the account of the credentials, such as
// "dns.example.com/account-42"; never a secret itself). Calls through
// clients of the same name share one Retry-After hold and one rate limit
// ([WithRateLimit]). Without it, all the Reconciler's clients are one
// system.
type SystemNamer interface {
	System() string
}

// Validator is an optional method of a [Client]: Validate checks obj's
// spec before any call to the system. An error is a verdict on the spec:
// the object is Stalled (reason InvalidSpec, unless the error carries one
// through koperrors.WithReason) and no call is made until the object
// changes. Name the field in the message ("spec.size: must be at least
// 1"). Validate is not called during deletion, so that an invalid object
// can always be deleted.
type Validator[T client.Object] interface {
	Validate(ctx context.Context, obj T) error
}

// Credentialed is an optional method of a [Client]: Credentials returns
// an identity of the credentials the client uses (a hash of the token, or
// the resourceVersion of the Secret it was read from; never the secret
// itself). A Ready object whose credentials differ from those of its last
// check is checked again at once, whatever woke it (a Secret named
// through the Builder's References): a revoked token is noticed when its
// Secret changes, not at the next periodic check.
type Credentialed interface {
	Credentials() string
}

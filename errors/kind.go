package errors

// Kind says what went wrong, in a closed set of values. Kinds are used as
// Prometheus label values (kopgo_reconcile_errors_total{error_kind}, in snake_case), so the set
// never grows with the errors a program meets: anything unclassified is
// [Internal], and adding a Kind is a breaking change of the metrics.
type Kind uint8

// The kinds, in the order [Kinds] lists them. The package documentation
// (section Kinds) says which errors [KindOf] maps to each.
const (
	// Internal is a bug or an error no other kind describes. It is the zero
	// value, so an unclassified error is Internal.
	Internal Kind = iota
	// NotFound: the object, or the kind of object, does not exist (404).
	NotFound
	// Conflict: an optimistic-lock failure: the object changed since it was
	// read (409 Conflict on a stale resourceVersion). Read again and retry.
	Conflict
	// Forbidden: the caller may not do this (401, 403).
	Forbidden
	// Invalid: the request or the object is wrong and retrying it unchanged
	// will not help (400, 405, 406, 413, 415, 422, a server-side apply
	// conflict with another field manager, a kind the server does not serve,
	// a wrong scope).
	Invalid
	// Timeout: a deadline passed (504, the API server's own timeout,
	// context.DeadlineExceeded, a network timeout).
	Timeout
	// Unavailable: the API server or the network cannot serve the request
	// now (503, 429, 500 from the server, connection refused or reset).
	Unavailable
	// Serialization: data could not be encoded or decoded.
	Serialization
	// IO: a local file or device failed.
	IO
	// Config: the program's own configuration is wrong or missing
	// (kubeconfig, in-cluster configuration, certificates, options).
	Config
	// AlreadyExists: a create met an object of the same name (409
	// AlreadyExists). Retrying the same create cannot succeed until that
	// object goes away; it is not a stale read.
	AlreadyExists
	// Expired: a list or watch asked for a resourceVersion the server no
	// longer holds (410 Gone, Expired): list again from the start.
	Expired
)

var kindNames = [...]string{
	Internal:      "Internal",
	NotFound:      "NotFound",
	Conflict:      "Conflict",
	Forbidden:     "Forbidden",
	Invalid:       "Invalid",
	Timeout:       "Timeout",
	Unavailable:   "Unavailable",
	Serialization: "Serialization",
	IO:            "IO",
	Config:        "Config",
	AlreadyExists: "AlreadyExists",
	Expired:       "Expired",
}

// String returns the kind's name, such as "NotFound". A value outside the
// set renders as "Internal", so label values stay bounded.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return kindNames[Internal]
}

// Kinds returns every kind, for pre-registering metric label values.
func Kinds() []Kind {
	ks := make([]Kind, len(kindNames))
	for i := range ks {
		ks[i] = Kind(i)
	}
	return ks
}

// Retryable reports whether an error of this kind may succeed when retried
// unchanged: Conflict, Expired, Timeout and Unavailable are; the rest need a
// change somewhere first. NotFound and Internal are retried by the reconcile loop
// with backoff all the same, since the world may change.
func (k Kind) Retryable() bool {
	return k == Conflict || k == Expired || k == Timeout || k == Unavailable
}

package errors

// Kind says what went wrong, in a closed set of values. Kinds are used as
// Prometheus label values (kopgo_reconcile_errors_total{kind}), so the set
// never grows with the errors a program meets: anything unclassified is
// [Internal].
type Kind uint8

// The kinds, in the order [Kinds] lists them.
const (
	// Internal is a bug or an error no other kind describes. It is the zero
	// value, so an unclassified error is Internal.
	Internal Kind = iota
	// NotFound: the object, or the kind of object, does not exist (404, 410 Gone).
	NotFound
	// Conflict: the object changed since it was read, or already exists (409).
	Conflict
	// Forbidden: the caller may not do this (401, 403).
	Forbidden
	// Invalid: the request or the object is wrong and retrying will not help
	// (400, 405, 406, 413, 415, 422, an unknown kind, a wrong scope).
	Invalid
	// Timeout: a deadline passed (504, the API server's own timeout,
	// context.DeadlineExceeded, a network timeout).
	Timeout
	// Unavailable: the API server or the network is not reachable now (503,
	// 429, 500 from the server, connection refused or reset).
	Unavailable
	// Serialization: data could not be encoded or decoded.
	Serialization
	// IO: a local file or device failed.
	IO
	// Config: the program's own configuration is wrong or missing
	// (kubeconfig, in-cluster configuration, options).
	Config
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
}

// String returns the kind's name, such as "NotFound".
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
// unchanged: Conflict, Timeout and Unavailable are; the rest need a change
// somewhere first. NotFound and Internal are retried by the reconcile loop
// with backoff all the same, since the world may change.
func (k Kind) Retryable() bool {
	return k == Conflict || k == Timeout || k == Unavailable
}

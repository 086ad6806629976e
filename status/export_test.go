package status

// Exported for the tests of package status_test.
const (
	MaxMessageBytes   = maxMessageBytes
	ReasonUnspecified = reasonUnspecified
)

// Less reports whether a condition of type a sorts before one of type b in
// the order Set keeps.
func Less(a, b string) bool { return compareTypes(a, b) < 0 }

// ReasonOf is reasonOf, for the tests.
func ReasonOf(err error) string { return reasonOf(err) }

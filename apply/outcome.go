package apply

import "fmt"

// Outcome says what an apply did to the object. The zero Outcome claims
// nothing: it is what a failed apply returns, and it is none of Created,
// Updated and Unchanged (it prints as "None"), so that a result read
// without its error cannot pass for "nothing changed".
type Outcome uint8

const (
	// Unchanged means the object already held the desired state.
	Unchanged Outcome = iota + 1
	// Created means the object did not exist and was created.
	Created
	// Updated means the object existed and changed.
	Updated
)

// String returns "Unchanged", "Created" or "Updated", and "None" for the
// zero Outcome; lower-cased, the three are the values of the outcome label
// of kopgo's apply metrics (a failed apply is not counted there).
func (o Outcome) String() string {
	switch o {
	case 0:
		return "None"
	case Unchanged:
		return "Unchanged"
	case Created:
		return "Created"
	case Updated:
		return "Updated"
	default:
		return fmt.Sprintf("Outcome(%d)", o)
	}
}

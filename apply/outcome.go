package apply

import "fmt"

// Outcome says what an apply did to the object.
type Outcome uint8

const (
	// Unchanged means the object already held the desired state.
	Unchanged Outcome = iota
	// Created means the object did not exist and was created.
	Created
	// Updated means the object existed and changed.
	Updated
)

// String returns "Unchanged", "Created" or "Updated"; lower-cased, these are
// the values of the outcome label of kopgo's apply metrics.
func (o Outcome) String() string {
	switch o {
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

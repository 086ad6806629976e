package apply

// Remembered returns how many objects a remembers, for the tests of the
// bound set by WithMaxRecords.
func Remembered(a *Applier) int { return a.records.len() }

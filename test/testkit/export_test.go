package testkit

// ProcessesUnder is exported for the cleanup tests.
var ProcessesUnder = processesUnder

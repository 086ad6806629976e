//go:build race

package echoserver_test

// raceEnabled: the tests run with -race, and so does the operator binary
// they build.
const raceEnabled = true

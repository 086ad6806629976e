//go:build race

package reliability_test

// raceEnabled: the operator binary is built with -race when the tests are.
const raceEnabled = true

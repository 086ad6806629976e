//go:build !race

package reliability_test

const raceEnabled = false

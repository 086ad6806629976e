package testkit_test

import (
	"os"
	"strings"
	"testing"

	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	// The cleanup tests re-run this binary as a child that starts clusters of
	// its own; such a child must not start the shared one.
	if mode := os.Getenv(childEnv); strings.HasPrefix(mode, "suite-") {
		os.Exit(childSuite(m, mode)) // a suite of its own: TestMainStopsTheOperatorFirst
	} else if mode != "" {
		os.Exit(m.Run())
	}
	testkit.Main(m, testkit.Options{Full: true, Nodes: 2}, func(c *testkit.Cluster) { cluster = c })
}

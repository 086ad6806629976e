package testkit_test

import (
	"os"
	"testing"

	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	// The cleanup tests re-run this binary as a child that starts clusters of
	// its own; such a child must not start the shared one.
	if os.Getenv(childEnv) != "" {
		os.Exit(m.Run())
	}
	testkit.Main(m, testkit.Options{Full: true, Nodes: 2}, func(c *testkit.Cluster) { cluster = c })
}

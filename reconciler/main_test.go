package reconciler_test

import (
	"testing"

	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, widget.TestkitOptions(), func(c *testkit.Cluster) { cluster = c })
}

package e2e_test

import (
	"context"
	"testing"
	"time"

	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	opts := widget.TestkitOptions() // Widget parents for the Sync tests
	opts.Full, opts.Nodes = true, 2
	testkit.Main(m, opts, func(c *testkit.Cluster) { cluster = c })
}

// eventually polls cond until it returns nil or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	testkit.Eventually(t, timeout, what, cond)
}

package testkit

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"
)

// Main starts a cluster for a test package, hands it to use, runs the tests
// and stops the cluster. Call it from TestMain:
//
//	var cluster *testkit.Cluster
//
//	func TestMain(m *testing.M) {
//		testkit.Main(m, testkit.Options{}, func(c *testkit.Cluster) { cluster = c })
//	}
//
// After the tests, Main stops the cluster as [Cluster.Stop] describes: what
// use registered with [Cluster.Cleanup] or started with [Cluster.Go] stops
// first, while the API server still answers, so that an operator run for
// the whole suite stops before the cluster does:
//
//	func TestMain(m *testing.M) {
//		testkit.Main(m, testkit.Options{Full: true}, func(c *testkit.Cluster) {
//			cluster = c
//			mgr, err := ctrl.NewManager(c.Config, ctrl.Options{Scheme: c.Scheme()})
//			... // register the operator's controllers
//			c.Go(mgr.Start)
//		})
//	}
//
// If the cluster cannot start, Main prints why (with the failing component's
// last log lines) and exits 1 without running any test. If a function
// started with [Cluster.Go] failed, Main exits 1 even when every test
// passed. The cluster also goes away when a test panics or the test binary
// times out: see the package documentation.
func Main(m *testing.M, opts Options, use func(*Cluster)) {
	os.Exit(run(m, opts, use))
}

func run(m *testing.M, opts Options, use func(*Cluster)) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	start := time.Now()
	c, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testkit: %v\n", err)
		return 1
	}
	defer c.Stop()
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "testkit: cluster ready in %s; KUBECONFIG=%s\n", time.Since(start).Round(time.Millisecond), c.Kubeconfig)
	}
	use(c)
	code := m.Run()
	c.Stop()
	if err := c.Err(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "testkit: FAIL: a function started with Cluster.Go failed (see above)")
		code = 1
	}
	return code
}

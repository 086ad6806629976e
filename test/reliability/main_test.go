package reliability_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kopgo/kopgo/examples/webapp"
	"github.com/kopgo/kopgo/examples/webapp/demo"
	"github.com/kopgo/kopgo/examples/webapp/operator"
	"github.com/kopgo/kopgo/test/testkit"
)

// operatorUser is the user the operator runs as, bound only to the
// generated ClusterRole (and, per scenario, its Role in the scenario's
// namespace).
const operatorUser = "webapp-operator-reliability"

var (
	cluster *testkit.Cluster
	// operatorBin is the webapp binary, built once into the cluster's
	// directory (removed with it, by the reaper too if this binary dies).
	operatorBin string
	// load is the size of each scenario.
	load sizes
)

// maxParents is the most WebApps a scenario can have: each has a Service
// with a cluster IP, and the testkit's Service range (a /16) must hold them
// and the Services of namespaces still being deleted.
const maxParents = 5000

// sizes are a variant's parameters: short up to 50 parents (outages and
// quiet windows of seconds), full beyond.
type sizes struct {
	full    bool
	parents int
	// quiet is the window after convergence in which the operator should
	// send almost nothing.
	quiet time.Duration
	// outage is how long the API server stays down mid-convergence.
	outage time.Duration
	// converge bounds a scenario's convergence.
	converge time.Duration
}

func sizesFromEnv() (sizes, error) {
	v := os.Getenv("RELIABILITY_N")
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxParents {
		return sizes{}, fmt.Errorf("RELIABILITY_N=%q: want a number of parents from 1 to %d", v, maxParents)
	}
	if n <= 50 {
		return sizes{parents: n, quiet: 15 * time.Second, outage: 5 * time.Second, converge: 4 * time.Minute}, nil
	}
	return sizes{full: true, parents: n, quiet: time.Minute, outage: 40 * time.Second, converge: 10 * time.Minute}, nil
}

func (s sizes) String() string { return fmt.Sprintf("%d WebApps", s.parents) }

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() || os.Getenv("RELIABILITY_N") == "" {
		// Minutes of a full cluster under load: not part of `make test`.
		fmt.Println("reliability: skipped; set RELIABILITY_N (make test-reliability)")
		return
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	var err error
	if load, err = sizesFromEnv(); err != nil {
		fmt.Fprintln(os.Stderr, "reliability:", err)
		return 1
	}
	crds, err := webapp.CRDs()
	if err != nil {
		fmt.Fprintln(os.Stderr, "reliability:", err)
		return 1
	}

	// Build the operator while the cluster starts.
	buildDir, err := os.MkdirTemp("", "kopgo-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "reliability:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(buildDir) }()
	built := make(chan error, 1)
	go func() { built <- buildOperator(filepath.Join(buildDir, "webapp")) }()

	start := time.Now()
	nodes := 2 + load.parents/50 // 110 pods per node; a scenario has up to 1.5 × parents
	c, err := testkit.Start(context.Background(), testkit.Options{Full: true, Nodes: nodes, CRDs: crds, Scheme: operator.Scheme(), StartTimeout: 5 * time.Minute})
	if err != nil {
		if berr := <-built; berr != nil {
			fmt.Fprintln(os.Stderr, "reliability:", berr)
		}
		fmt.Fprintln(os.Stderr, "reliability: testkit:", err)
		return 1
	}
	defer c.Stop()
	cluster = c
	if err := <-built; err != nil {
		fmt.Fprintln(os.Stderr, "reliability:", err)
		return 1
	}
	operatorBin = filepath.Join(c.Dir, "webapp")
	if err := os.Rename(filepath.Join(buildDir, "webapp"), operatorBin); err != nil {
		fmt.Fprintln(os.Stderr, "reliability:", err)
		return 1
	}
	_ = os.Remove(buildDir) // empty now
	if err := demo.Install(context.Background(), c.Client(), operatorUser); err != nil {
		fmt.Fprintln(os.Stderr, "reliability:", err)
		return 1
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "reliability: %s per scenario; cluster and operator ready in %s; KUBECONFIG=%s\n",
			load, time.Since(start).Round(time.Millisecond), c.Kubeconfig)
	}
	code := m.Run()
	printResults()
	return code
}

// buildOperator builds examples/webapp/cmd/webapp into path, with the race
// detector when this test binary has it.
func buildOperator(path string) error {
	args := []string{"build", "-o", path}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "github.com/kopgo/kopgo/examples/webapp/cmd/webapp")
	cmd := exec.Command("go", args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// result is one row of the table the suite prints.
type result struct {
	scenario, load, faults, outcome, figures string
}

var (
	resultsMu sync.Mutex
	results   []result
)

// report adds a row to the table. outcome is "pass" unless the test failed.
func report(t *testing.T, r result) {
	t.Helper()
	t.Cleanup(func() {
		switch {
		case t.Skipped():
			r.outcome = "skipped: " + r.outcome
		case t.Failed():
			r.outcome = "FAIL"
		case r.outcome == "":
			r.outcome = "pass"
		}
		t.Logf("| %s | %s | %s | %s | %s |", r.scenario, r.load, r.faults, r.outcome, r.figures)
		resultsMu.Lock()
		results = append(results, r)
		resultsMu.Unlock()
	})
}

func printResults() {
	resultsMu.Lock()
	defer resultsMu.Unlock()
	if len(results) == 0 {
		return
	}
	var b strings.Builder
	variant := "short"
	if load.full {
		variant = "full"
	}
	fmt.Fprintf(&b, "## Reliability (%s variant, %s)\n\n", variant, time.Now().UTC().Format("2006-01-02 15:04 MST"))
	b.WriteString("| scenario | load | faults | outcome | figures |\n|---|---|---|---|---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.scenario, r.load, r.faults, r.outcome, r.figures)
	}
	fmt.Println()
	fmt.Print(b.String())
	if os.Getenv("RELIABILITY_WRITE") == "1" {
		header := "# Reliability results\n\nWritten by `RELIABILITY_WRITE=1 make test-reliability`; see the package documentation for the scenarios.\n\n"
		if err := os.WriteFile("RESULTS.md", []byte(header+b.String()), 0o644); err != nil { //nolint:gosec // a document
			fmt.Fprintln(os.Stderr, "reliability: write RESULTS.md:", err)
		}
	}
}

package demo_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kopgo/kopgo/examples/webapp"
	webappv1 "github.com/kopgo/kopgo/examples/webapp/api/v1alpha1"
	"github.com/kopgo/kopgo/examples/webapp/demo"
	"github.com/kopgo/kopgo/examples/webapp/operator"
	"github.com/kopgo/kopgo/test/testkit"
)

var (
	cluster *testkit.Cluster
	runs    atomic.Int32 // operator names must differ per run (go test -count)
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	crds, err := webapp.CRDs()
	if err != nil {
		panic(err)
	}
	testkit.Main(m, testkit.Options{Full: true, Nodes: 2, CRDs: crds, Scheme: operator.Scheme()}, func(c *testkit.Cluster) { cluster = c })
}

// The walkthrough of `make demo`, with the operator running as a user bound
// only to the generated RBAC (config/rbac). Every request the operator sends
// is recorded: a request the API server refuses and a rule the operator
// never uses both fail the test, so the markers stay minimal and complete.
func TestWalkthroughWithGeneratedRBAC(t *testing.T) {
	const user = "webapp-operator-e2e"
	if err := demo.Install(t.Context(), cluster.Client(), user); err != nil {
		t.Fatal(err)
	}
	cfg, err := cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	cfg, perms := testkit.RecordPermissions(cfg)

	op, err := demo.StartOperator(t.Context(), cfg, fmt.Sprintf("webapp-e2e-%d", runs.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = op.Stop() }() // when the test fails early
	summary, err := demo.Walkthrough(t.Context(), cluster.Client(), cluster.Namespace(t), testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	token, err := demo.MetricsToken(t.Context(), cluster.Client())
	if err != nil {
		t.Fatal(err)
	}
	counts, err := op.Reconciles(t.Context(), token)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Stop(); err != nil {
		t.Fatalf("operator: %v", err)
	}
	t.Logf("reconciles: %v; steps: %+v", counts, summary.Steps)
	if counts["success"] == 0 || counts["terminal"] == 0 {
		t.Errorf("reconciles = %v, want successes (the web app) and terminal errors (the broken one)", counts)
	}
	// A terminal error is not retried: the broken WebApp is reconciled on
	// creation and when its finalizer is removed, not in a backoff loop.
	if n := counts["error"]; n > 0 {
		t.Errorf("%d reconciles ended in a retryable error, want 0", n)
	}

	if denied := perms.Denied(); len(denied) > 0 {
		t.Errorf("the API server refused the operator (missing RBAC rules):\n  %s", strings.Join(denied, "\n  "))
	}
	cr, role, err := webapp.RBAC()
	if err != nil {
		t.Fatal(err)
	}
	unused := perms.Unused(slices.Concat(cr.Rules, role.Rules),
		testkit.BlockOwnerDeletion(webappv1.GroupVersion.Group, "webapps"),
		testkit.PatchEvents,
	)
	if len(unused) > 0 {
		t.Errorf("RBAC rules the operator never used (excess permissions): %v\nused: %v", unused, perms.Used())
	}
}

// testWriter prints the walkthrough's progress in the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

package testkit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kopgo/kopgo/test/testkit"
)

// The child suites of TestMainStopsTheOperatorFirst: the same operator run
// for a whole suite, stopped by Main before the cluster (suite-go), not
// stopped at all as before Main had a hook (suite-unstopped, the control
// that shows the test can see errors), and one that fails (suite-go-error).
const (
	suiteGo        = "suite-go"
	suiteUnstopped = "suite-unstopped"
	suiteGoError   = "suite-go-error"
)

// Markers the child suites print.
const (
	markTestsDone       = "CHILD: TESTS DONE"
	markOperatorStopped = "CHILD: OPERATOR STOPPED, API SERVER UP: "
	markOperatorFailed  = "operator could not start"
)

// childSuite is TestMain for the child suites.
func childSuite(m *testing.M, mode string) int {
	errorLogged := make(chan struct{})
	var once sync.Once
	logger := funcr.New(func(prefix, args string) {
		// Errors are what the test looks for; info is noise.
		if strings.HasPrefix(args, `"level"=`) {
			return
		}
		fmt.Fprintf(os.Stderr, "ERROR %s %s\n", prefix, args)
		once.Do(func() { close(errorLogged) })
	}, funcr.Options{})
	ctrl.SetLogger(logger)
	klog.SetLogger(logger) // client-go's reflectors and HandleError

	opts := testkit.Options{Full: true, Nodes: 1}
	switch mode {
	case suiteGo:
		testkit.Main(m, opts, func(c *testkit.Cluster) {
			cluster = c
			c.Go(func(ctx context.Context) error {
				err := runOperator(ctx, c, logger)
				// The cluster must still answer: its components stop after.
				up := c.Client().Get(context.Background(), client.ObjectKey{Name: "default"}, &corev1.Namespace{}) == nil
				fmt.Fprintf(os.Stderr, "%s%t\n", markOperatorStopped, up)
				return err
			})
		})
	case suiteGoError:
		testkit.Main(m, opts, func(c *testkit.Cluster) {
			cluster = c
			c.Go(func(context.Context) error { return errors.New(markOperatorFailed) })
		})
	case suiteUnstopped:
		// What a suite did before Main had a hook: the operator runs in a
		// goroutine that nothing stops, so it outlives the cluster. The
		// process goes on a little (as it would with more packages or
		// deferred work) until the operator has logged its complaint.
		c, err := testkit.Start(context.Background(), opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		cluster = c
		go func() { _ = runOperator(context.Background(), c, logger) }()
		code := m.Run()
		c.Stop()
		select {
		case <-errorLogged:
		case <-time.After(20 * time.Second):
		}
		return code
	}
	return 0 // unreachable: Main exits
}

// runOperator runs a controller-runtime manager whose reconciler marks the
// ConfigMaps labelled operated=true and keeps polling them, as operators
// that watch something outside the cluster do.
func runOperator(ctx context.Context, c *testkit.Cluster, logger logr.Logger) error {
	mgr, err := ctrl.NewManager(c.Config, ctrl.Options{
		Scheme:                 c.Scheme(),
		Logger:                 logger,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	reader := mgr.GetAPIReader()
	err = ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		var cm corev1.ConfigMap
		if err := reader.Get(ctx, req.NamespacedName, &cm); err != nil {
			if ctx.Err() != nil {
				return reconcile.Result{}, nil // shutting down
			}
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		if cm.Labels["operated"] != "true" {
			return reconcile.Result{}, nil
		}
		if cm.Annotations["operated"] == "" {
			patch := client.MergeFrom(cm.DeepCopy())
			metav1.SetMetaDataAnnotation(&cm.ObjectMeta, "operated", "yes")
			if err := mgr.GetClient().Patch(ctx, &cm, patch); err != nil && ctx.Err() == nil {
				return reconcile.Result{}, err
			}
		}
		return reconcile.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}))
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// TestChildSuite is the one test of the child suites: the operator works.
func TestChildSuite(t *testing.T) {
	if !strings.HasPrefix(os.Getenv(childEnv), "suite-") {
		t.Skip("helper for TestMainStopsTheOperatorFirst; runs only as its child process")
	}
	ns := cluster.Namespace(t)
	c := cluster.Client()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm", Labels: map[string]string{"operated": "true"}}}
	if err := c.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	if os.Getenv(childEnv) != suiteGoError {
		eventually(t, 60*time.Second, "the operator marks the ConfigMap", func(ctx context.Context) error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
				return err
			}
			if cm.Annotations["operated"] != "yes" {
				return errorf("annotations %v", cm.Annotations)
			}
			return nil
		})
	}
	fmt.Fprintln(os.Stderr, markTestsDone)
}

// A suite that runs its operator with Cluster.Go in testkit.Main: the
// operator stops while the API server still answers, and nothing is logged
// as an error after the tests are done. The control (the same suite with
// the operator left running, as before Main had a hook) logs errors once
// the cluster is gone, so the check can fail. A function started with Go
// that fails makes the suite fail though its tests pass.
func TestMainStopsTheOperatorFirst(t *testing.T) {
	// run runs a child suite and returns its whole output and the part
	// after its test finished.
	run := func(t *testing.T, mode string) (out, after string, err error) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildSuite$", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"="+mode)
		b, err := cmd.CombinedOutput()
		out = string(b)
		_, after, ok := strings.Cut(out, markTestsDone)
		if !ok {
			t.Fatalf("child suite %s did not finish its test (%v); output:\n%s", mode, err, out)
		}
		return out, after, err
	}
	errorsIn := func(out string) []string {
		var errs []string
		for line := range strings.SplitSeq(out, "\n") {
			if strings.HasPrefix(line, "ERROR ") {
				errs = append(errs, line)
			}
		}
		return errs
	}

	t.Run("stopped by Main", func(t *testing.T) {
		_, after, err := run(t, suiteGo)
		if err != nil {
			t.Errorf("child suite failed: %v; output after its tests:\n%s", err, after)
		}
		if !strings.Contains(after, markOperatorStopped+"true") {
			t.Errorf("the operator did not stop while the API server was up; output after the tests:\n%s", after)
		}
		if errs := errorsIn(after); len(errs) > 0 {
			t.Errorf("%d errors logged after the tests, first: %s", len(errs), errs[0])
		}
	})
	t.Run("control: left running", func(t *testing.T) {
		_, after, _ := run(t, suiteUnstopped)
		if errs := errorsIn(after); len(errs) == 0 {
			t.Errorf("an operator left running logged no error after the cluster stopped; the check above proves nothing. Output after the tests:\n%s", after)
		}
	})
	t.Run("failing function", func(t *testing.T) {
		out, after, err := run(t, suiteGoError)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("child suite: %v, want exit status 1", err)
		}
		if !strings.Contains(out, markOperatorFailed) || !strings.Contains(after, "FAIL") {
			t.Errorf("the function's error is not reported, or the suite not failed; output:\n%s", out)
		}
	})
}

// Stop runs the cleanup functions last registered first, each while the
// API server still answers, waits for the functions started with Go, goes
// on past a panicking cleanup and stops the cluster anyway, then panics.
func TestCleanupRunsBeforeTheClusterStops(t *testing.T) {
	c, err := testkit.Start(t.Context(), testkit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	var order []string
	record := func(name string) {
		err := c.Client().Get(context.Background(), client.ObjectKey{Name: "default"}, &corev1.Namespace{})
		order = append(order, fmt.Sprintf("%s (API server: %v)", name, err))
	}
	c.Cleanup(func() { record("first") })
	c.Cleanup(func() { panic("a cleanup panics") })
	c.Go(func(ctx context.Context) error {
		<-ctx.Done()
		record("go")
		return ctx.Err()
	})
	c.Cleanup(func() { record("last") })

	panicked := func() (r any) {
		defer func() { r = recover() }()
		c.Stop()
		return nil
	}()
	if panicked != "a cleanup panics" {
		t.Errorf("Stop panicked with %v, want the cleanup's panic", panicked)
	}
	want := []string{"last (API server: <nil>)", "go (API server: <nil>)", "first (API server: <nil>)"}
	if !slices.Equal(order, want) {
		t.Errorf("cleanups ran as %q, want %q", order, want)
	}
	if pids := testkit.ProcessesUnder(c.Dir); len(pids) > 0 {
		t.Errorf("processes %v still run after Stop", pids)
	}
	if err := c.Err(); err != nil {
		t.Errorf("Err = %v, want nil (the Go function ended with its context)", err)
	}
	ran := false
	c.Cleanup(func() { ran = true })
	if !ran {
		t.Error("a cleanup registered after Stop did not run at once")
	}
}

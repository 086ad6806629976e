package fakesystem_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

// The test binary runs as a child process when childEnv says which:
// "client" (a client that creates one resource, for the Operator tests
// without a cluster) or "operator" (the Widget operator of
// widgets_test.go).
const (
	childEnv     = "FAKESYSTEM_TEST_CHILD"
	urlEnv       = "FAKESYSTEM_TEST_URL"
	namespaceEnv = "FAKESYSTEM_TEST_NAMESPACE"
)

// The cluster is started by the first test that needs one, so that the
// server's own tests run without the control-plane binaries.
var (
	clusterOnce sync.Once
	cluster     *testkit.Cluster
	clusterErr  error
)

func testCluster(t *testing.T) *testkit.Cluster {
	t.Helper()
	clusterOnce.Do(func() {
		cluster, clusterErr = testkit.Start(context.Background(), testkit.Options{
			Scheme: widget.Scheme(), CRDs: []*apiextensionsv1.CustomResourceDefinition{widget.CRD()},
		})
	})
	if clusterErr != nil {
		t.Fatal(clusterErr)
	}
	return cluster
}

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "client":
		os.Exit(clientMain())
	case "operator":
		os.Exit(operatorMain())
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	code := m.Run()
	if cluster != nil {
		cluster.Stop()
	}
	os.Exit(code)
}

// clientMain creates one resource tagged "child" and waits for SIGTERM.
func clientMain() int {
	fmt.Printf("pid %d\n", os.Getpid())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, os.Getenv(urlEnv)+"/v1/resources", strings.NewReader(`{"tag": "child"}`))
	if err != nil {
		fmt.Println(err)
		return 2
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	_ = resp.Body.Close()
	fmt.Println("create:", resp.Status)
	<-ctx.Done()
	return 0
}

// operatorMain runs the Widget operator for the Widgets labelled with
// namespaceEnv until SIGTERM (or SIGKILL).
func operatorMain() int {
	fmt.Printf("pid %d\n", os.Getpid())
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.InfoLevel)))
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	ns := os.Getenv(namespaceEnv)
	if err := widgetOperator("widgets", os.Getenv(urlEnv), ns).Config(cfg).Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// eventually polls cond every 20 ms until it returns nil, for at most
// timeout (a bound for a stuck test, not a timing assertion).
func eventuallyWithin(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	testkit.Eventually(t, timeout, what, func(context.Context) error { return cond() })
}

func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	eventuallyWithin(t, 30*time.Second, what, cond)
}

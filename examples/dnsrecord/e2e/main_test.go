// Package e2e tests the DNSRecord operator against a real API server and
// the example's provider: crash safety with the operator process SIGKILLed
// at each step of a create, provider failures while objects come and go,
// drift, credentials from a Secret, and the idle request profile.
package e2e

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/examples/dnsrecord"
	"github.com/kopgo/kopgo/examples/dnsrecord/api/v1alpha1"
	"github.com/kopgo/kopgo/examples/dnsrecord/operator"
	"github.com/kopgo/kopgo/examples/dnsrecord/provider"
	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit"
)

var (
	cluster *testkit.Cluster
	scheme  = operator.Scheme()
)

// operatorEnv, set, makes the test binary run operatorMain instead of its
// tests: an operator process that a test can SIGKILL.
const operatorEnv = "KOPGO_DNSRECORD_OPERATOR"

const token = "t0k3n"

func TestMain(m *testing.M) {
	if os.Getenv(operatorEnv) != "" {
		os.Exit(operatorMain())
	}
	crds, err := dnsrecord.CRDs()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	testkit.Main(m, testkit.Options{Scheme: scheme, CRDs: crds}, func(c *testkit.Cluster) { cluster = c })
}

// operatorMain runs the DNSRecord operator for the DNSRecords labelled
// e2e=<KOPGO_TEST_NAMESPACE> until SIGTERM (or SIGKILL).
func operatorMain() int {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KOPGO_TEST_KUBECONFIG"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	period, err := time.ParseDuration(os.Getenv("KOPGO_TEST_PERIOD"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	b := operator.Builder(operator.Options{ProviderURL: os.Getenv("KOPGO_TEST_PROVIDER"), Period: period})
	if err := b.Config(cfg).LabelSelector("e2e=" + os.Getenv("KOPGO_TEST_NAMESPACE")).Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// runOperator runs the operator in this process until the test ends.
func runOperator(t *testing.T, name, ns, providerURL string, period time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- operator.Builder(operator.Options{ProviderURL: providerURL, Period: period, Name: name}).
			Config(cluster.Config).LabelSelector("e2e=" + ns).Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("Run did not return after its context ended")
		}
	})
}

// process is an operator process.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

// startProcess starts the operator in a child process; it is stopped when
// the test ends, if it still runs.
func startProcess(t *testing.T, ns, providerURL string, period time.Duration, logName string) *process {
	t.Helper()
	out, err := os.Create(filepath.Join(t.TempDir(), logName))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), operatorEnv+"=1", "KOPGO_TEST_KUBECONFIG="+cluster.Kubeconfig,
		"KOPGO_TEST_NAMESPACE="+ns, "KOPGO_TEST_PROVIDER="+providerURL, "KOPGO_TEST_PERIOD="+period.String())
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, done: make(chan struct{}), log: out.Name()}
	go func() { _ = cmd.Wait(); close(p.done); _ = out.Close() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			data, _ := os.ReadFile(p.log)
			lines := strings.Split(string(data), "\n")
			t.Logf("%s:\n%s", logName, strings.Join(lines[max(0, len(lines)-30):], "\n"))
		}
	})
	return p
}

// kill SIGKILLs the process and waits until it is gone.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// serveProvider serves a provider accepting token until the test ends.
func serveProvider(t *testing.T) (*provider.Server, string) {
	t.Helper()
	p := provider.NewServer(provider.Options{Tokens: []string{token}})
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv.URL
}

// secret creates the Secret holding the provider's token in ns.
func secret(t *testing.T, ns, name, tok string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{v1alpha1.TokenKey: []byte(tok)}}
	if err := cluster.Client().Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// record creates DNSRecord name in ns: an A record of 10.0.0.<i>.
func record(t *testing.T, ns, name string, i int, secretName string) *v1alpha1.DNSRecord {
	t.Helper()
	r := &v1alpha1.DNSRecord{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"e2e": ns}},
		Spec: v1alpha1.DNSRecordSpec{Zone: "example.com", Name: name, Type: "A", Value: fmt.Sprintf("10.0.%d.%d", i/250, i%250+1),
			SecretRef: v1alpha1.SecretReference{Name: secretName}},
	}
	if err := cluster.Client().Create(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return r
}

func get(t *testing.T, r *v1alpha1.DNSRecord) (*v1alpha1.DNSRecord, error) {
	t.Helper()
	got := &v1alpha1.DNSRecord{}
	err := cluster.Client().Get(context.Background(), client.ObjectKeyFromObject(r), got)
	return got, err
}

// ready reports whether r is Ready for its generation with its record's ID
// on it.
func ready(r *v1alpha1.DNSRecord) bool {
	return r.Annotations[external.NameAnnotation] != "" && status.IsTrue(r, status.Ready) && status.IsCurrent(r)
}

// eventually polls cond every 50 ms until it returns nil or timeout ends.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %s: %v", what, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// byTag groups the provider's records by tag.
func byTag(p *provider.Server) map[string][]provider.Record {
	out := map[string][]provider.Record{}
	for _, r := range p.Records() {
		out[r.Tag] = append(out[r.Tag], r)
	}
	return out
}

// Package e2e tests the DNSRecord operator against a real API server and
// a fake DNS provider, package fakesystem's (its faults, request log and
// operator process, as you would test your own operator): crash safety
// with the operator process SIGKILLed at each step of a create, provider
// failures while objects come and go, drift, credentials from a Secret,
// and the idle request profile.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
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
	"github.com/kopgo/kopgo/test/testkit/fakesystem"
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

// operatorCmd is the operator as a child process (the test binary run
// again, see operatorMain), for [fakesystem.StartOperator].
func operatorCmd(ns, providerURL string, period time.Duration) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), operatorEnv+"=1", "KOPGO_TEST_KUBECONFIG="+cluster.Kubeconfig,
		"KOPGO_TEST_NAMESPACE="+ns, "KOPGO_TEST_PROVIDER="+providerURL, "KOPGO_TEST_PERIOD="+period.String())
	return cmd
}

// serveProvider serves the DNS provider, a fakesystem at /v1/records that
// accepts token and refuses a bad record as the real one does (400), until
// the test ends.
func serveProvider(t *testing.T) *fakesystem.System {
	t.Helper()
	return fakesystem.Start(t, fakesystem.Options{Path: "/v1/records", IDPrefix: "rec-", Tokens: []string{token}, Validate: validRecord})
}

// validRecord refuses what the provider refuses: a bad zone, name, type,
// value or TTL (see provider.Record.Validate).
func validRecord(res fakesystem.Resource) error {
	var r provider.Record
	if err := res.Decode(&r); err != nil {
		return err
	}
	return r.Validate()
}

// value is the value of the provider's record res.
func value(res fakesystem.Resource) string {
	var r provider.Record
	_ = res.Decode(&r)
	return r.Value
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
	testkit.Eventually(t, timeout, what, func(context.Context) error { return cond() })
}

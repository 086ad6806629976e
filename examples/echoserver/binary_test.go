//go:build linux

package echoserver_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/examples/echoserver/api/v1alpha1"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit"
)

// The lease cmd/echoserver holds with --leader-elect.
const leaseName = "echoserver-operator"

// TestBinaryLeaderElection builds cmd/echoserver and runs it twice with
// --leader-elect, as two replicas of a Deployment would run, each with its
// own kubeconfig (--kubeconfig; no $KUBECONFIG, no ~/.kube) for a user bound
// to the generated RBAC only. Exactly one leads and reconciles; the other
// stands by, ready. SIGTERM to the leader releases the lease, so that the
// standby takes over before the lease would have expired, and reconciles
// the next EchoServer; both exit 0.
func TestBinaryLeaderElection(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := t.Context()
	c := cluster.Client()
	bin := buildOperator(t)
	kubeconfig := bindGeneratedRBAC(t, ns)
	// The operators see only this test's EchoServers.
	const testLabel = "echoserver.examples.kopgo.dev/test"
	selector := testLabel + "=" + ns

	a := startBinary(t, bin, "a", "--kubeconfig="+kubeconfig, "--namespace="+ns, "--leader-elect", "--selector="+selector, "--concurrency=2")
	b := startBinary(t, bin, "b", "--kubeconfig="+kubeconfig, "--namespace="+ns, "--leader-elect", "--selector="+selector, "--concurrency=2")
	// /metrics is HTTPS and answers only tokens allowed to read it.
	token := metricsToken(t, ns)
	a.token, b.token = token, token
	a.waitReady(t)
	b.waitReady(t) // the standby is ready too: alive, caches synced

	lease := &coordinationv1.Lease{}
	var leader, standby *binary
	eventually(t, "exactly one leader", func(ctx context.Context) (bool, string) {
		if why := getInto(ctx, ns, leaseName, lease); why != "" {
			return false, why
		}
		la, lb := a.leading(ctx), b.leading(ctx)
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" || la == lb {
			return false, fmt.Sprintf("lease holder %v; a leads: %v, b leads: %v", lease.Spec.HolderIdentity, la, lb)
		}
		leader, standby = a, b
		if lb {
			leader, standby = b, a
		}
		return true, ""
	})
	firstHolder := *lease.Spec.HolderIdentity
	t.Logf("%s leads as %s", leader.name, firstHolder)

	converge(t, ns, "first", map[string]string{testLabel: ns})
	if n := leader.reconciles(t); n == 0 {
		t.Errorf("the leader (%s) counted no reconcile", leader.name)
	}
	if n := standby.reconciles(t); n != 0 {
		t.Errorf("the standby (%s) reconciled %d times, want 0", standby.name, n)
	}
	if !leader.logged("Starting workers") || standby.logged("Starting workers") {
		t.Errorf("controller workers started in the leader: %v, in the standby: %v; want only the leader",
			leader.logged("Starting workers"), standby.logged("Starting workers"))
	}

	// SIGTERM: the leader drains, releases the lease and exits 0.
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: leaseName}, lease); err != nil {
		t.Fatal(err)
	}
	lastRenew := lease.Spec.RenewTime.Time
	expiry := lastRenew.Add(time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second)
	if code := leader.stop(t); code != 0 {
		t.Errorf("the leader exited %d on SIGTERM, want 0", code)
	}
	eventually(t, "the standby takes over", func(ctx context.Context) (bool, string) {
		if why := getInto(ctx, ns, leaseName, lease); why != "" {
			return false, why
		}
		h := lease.Spec.HolderIdentity
		if h == nil || *h == "" || *h == firstHolder || !standby.leading(ctx) {
			return false, fmt.Sprintf("lease holder %v (was %s); %s leads: %v", h, firstHolder, standby.name, standby.leading(ctx))
		}
		return true, ""
	})
	// A lease that was not released is taken over only once it expired
	// (its duration after the last renewal); a released one at the
	// standby's next try.
	if acquired := lease.Spec.AcquireTime.Time; !acquired.Before(expiry) {
		t.Errorf("the standby acquired the lease at %s, not before it expired (%s): the leader did not release it",
			acquired.Format(time.RFC3339Nano), expiry.Format(time.RFC3339Nano))
	}
	t.Logf("%s took over %s after the last renewal of %s", standby.name,
		lease.Spec.AcquireTime.Sub(lastRenew).Round(time.Millisecond), leader.name)

	// The new leader reconciles: a new EchoServer converges.
	converge(t, ns, "second", map[string]string{testLabel: ns})
	if n := standby.reconciles(t); n == 0 {
		t.Errorf("the new leader (%s) counted no reconcile", standby.name)
	}
	if code := standby.stop(t); code != 0 {
		t.Errorf("the new leader exited %d on SIGTERM, want 0", code)
	}
}

// converge creates an EchoServer and waits until its children exist,
// controlled by it, and (once the test played the Deployment controller)
// it is Ready.
func converge(t *testing.T, ns, name string, labels map[string]string) {
	t.Helper()
	es := &v1alpha1.EchoServer{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       v1alpha1.EchoServerSpec{Message: "hello from " + name, Replicas: new(int32(1))},
	}
	if err := cluster.Client().Create(t.Context(), es); err != nil {
		t.Fatal(err)
	}
	for _, child := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
		eventually(t, fmt.Sprintf("%T %s", child, name), func(ctx context.Context) (bool, string) {
			if why := getInto(ctx, ns, name, child); why != "" {
				return false, why
			}
			return metav1.IsControlledBy(child, es), "not controlled by the EchoServer"
		})
	}
	rollOut(t, ns, name, 1)
	eventually(t, "EchoServer "+name+" Ready", func(ctx context.Context) (bool, string) {
		got, why := get(ctx, ns, name, &v1alpha1.EchoServer{})
		if why != "" {
			return false, why
		}
		return status.IsTrue(got, status.Ready), "status: " + fmtStatus(got)
	})
}

func getInto(ctx context.Context, ns, name string, obj client.Object) string {
	if err := cluster.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		return err.Error()
	}
	return ""
}

// buildOperator builds cmd/echoserver (with -race when the tests run with
// it, so that a race in the binary fails its exit code) and returns its
// path.
func buildOperator(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "echoserver")
	args := []string{"build", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/echoserver")...) // go test puts its go first in PATH
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// bindGeneratedRBAC binds a new user to the rules of config/rbac/role.yaml,
// the ClusterRole cluster-wide and the leader-election Role in ns, and
// returns the path of a kubeconfig for that user.
func bindGeneratedRBAC(t *testing.T, ns string) string {
	t.Helper()
	ctx, c := t.Context(), cluster.Client()
	user := "echoserver-" + ns
	subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}
	f, err := os.Open("config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var roles int
	for {
		var doc rbacv1.ClusterRole // a Role has the same fields
		if err := d.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var objs []client.Object
		switch doc.Kind {
		case "ClusterRole":
			objs = []client.Object{
				&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: doc.Rules},
				&rbacv1.ClusterRoleBinding{
					ObjectMeta: metav1.ObjectMeta{Name: user},
					RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
					Subjects:   subjects,
				},
			}
		case "Role":
			objs = []client.Object{
				&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user}, Rules: doc.Rules},
				&rbacv1.RoleBinding{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
					RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
					Subjects:   subjects,
				},
			}
		default:
			t.Fatalf("config/rbac/role.yaml: unexpected %s", doc.Kind)
		}
		roles++
		for _, o := range objs {
			if err := c.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
			if o.GetNamespace() == "" {
				t.Cleanup(func() { _ = c.Delete(context.WithoutCancel(ctx), o) })
			}
		}
	}
	if roles != 2 {
		t.Fatalf("config/rbac/role.yaml has %d roles, want a ClusterRole and a leader-election Role", roles)
	}

	cfg, err := cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["testkit"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["testkit"] = &clientcmdapi.Context{Cluster: "testkit", AuthInfo: user}
	kc.CurrentContext = "testkit"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// binary is one running operator process.
type binary struct {
	name            string
	cmd             *exec.Cmd
	log             string // its stdout and stderr
	health, metrics string // host:port
	token           string // a bearer token allowed to GET /metrics
	done            chan struct{}
	exitCode        int
}

// startBinary starts the operator at path with args and free health and
// metrics ports, in a process group of its own that the test's cleanup
// kills (SIGKILL), and that dies with the test binary.
func startBinary(t *testing.T, path, name string, args ...string) *binary {
	t.Helper()
	ports, err := testkit.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := &binary{
		name:    name,
		log:     filepath.Join(dir, name+".log"),
		health:  "127.0.0.1:" + strconv.Itoa(ports[0]),
		metrics: "127.0.0.1:" + strconv.Itoa(ports[1]),
		done:    make(chan struct{}),
	}
	logFile, err := os.Create(b.log)
	if err != nil {
		t.Fatal(err)
	}
	args = append(args, "--health-port="+strconv.Itoa(ports[0]), "--metrics-port="+strconv.Itoa(ports[1]))
	b.cmd = exec.Command(path, args...)
	b.cmd.Stdout, b.cmd.Stderr = logFile, logFile
	// Only --kubeconfig reaches the cluster.
	env := []string{"HOME=" + dir}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	b.cmd.Env = env
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(b.done)
		_ = b.cmd.Wait()
		b.exitCode = b.cmd.ProcessState.ExitCode()
		_ = logFile.Close()
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.done
		if t.Failed() {
			data, _ := os.ReadFile(b.log)
			t.Logf("operator %s (exit %d) logged:\n%s", b.name, b.exitCode, tail(string(data), 60))
		}
	})
	return b
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitReady waits until /readyz answers 200.
func (b *binary) waitReady(t *testing.T) {
	t.Helper()
	eventually(t, "operator "+b.name+" ready", func(ctx context.Context) (bool, string) {
		select {
		case <-b.done:
			t.Fatalf("operator %s exited %d before it was ready", b.name, b.exitCode)
		default:
		}
		body, code, err := httpGet(ctx, "http://"+b.health+"/readyz")
		if err != nil {
			return false, err.Error()
		}
		return code == http.StatusOK, fmt.Sprintf("/readyz: %d %s", code, body)
	})
}

// stop sends SIGTERM and returns the exit code; it fails the test if the
// process does not exit within a minute (its graceful shutdown is 30 s).
func (b *binary) stop(t *testing.T) int {
	t.Helper()
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM operator %s: %v", b.name, err)
	}
	select {
	case <-b.done:
		return b.exitCode
	case <-time.After(time.Minute):
		t.Fatalf("operator %s still running a minute after SIGTERM", b.name)
		return -1
	}
}

// leading reports whether the process says it holds the lease
// (controller-runtime's leader_election_master_status).
func (b *binary) leading(ctx context.Context) bool {
	m, err := b.scrape(ctx)
	return err == nil && m[`leader_election_master_status{name="`+leaseName+`"}`] == 1
}

// reconciles returns the process's kopgo_reconcile_total, all results.
func (b *binary) reconciles(t *testing.T) int {
	t.Helper()
	m, err := b.scrape(t.Context())
	if err != nil {
		t.Fatalf("metrics of operator %s: %v", b.name, err)
	}
	n := 0.0
	for series, v := range m {
		if strings.HasPrefix(series, "kopgo_reconcile_total{") {
			n += v
		}
	}
	return int(n)
}

// logged reports whether the process logged a line containing s.
func (b *binary) logged(s string) bool {
	data, err := os.ReadFile(b.log)
	return err == nil && strings.Contains(string(data), s)
}

// scrape reads /metrics into series ("name{labels}") and values.
func (b *binary) scrape(ctx context.Context) (map[string]float64, error) {
	body, code, err := httpGetWithToken(ctx, "https://"+b.metrics+"/metrics", b.token)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("/metrics: %d", code)
	}
	m := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %w", line, err)
		}
		m[line[:i]] = v
	}
	return m, sc.Err()
}

func httpGet(ctx context.Context, url string) (string, int, error) {
	return httpGetWithToken(ctx, url, "")
}

// httpGetWithToken GETs url with a bearer token, if any, trusting the
// self-signed certificate of the metrics server.
func httpGetWithToken(ctx context.Context, url, token string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", 0, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	hc := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the metrics server's certificate is self-signed
	}}
	resp, err := hc.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return string(body), resp.StatusCode, err
}

// metricsToken makes a service account allowed to GET /metrics, as a
// Prometheus would be, and returns a token of it.
func metricsToken(t *testing.T, ns string) string {
	t.Helper()
	c := cluster.Client()
	name := "metrics-reader"
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
			Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ns + "-" + name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}},
	}
	for _, o := range objs {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), o) })
	}
	tr := &authenticationv1.TokenRequest{}
	if err := c.SubResource("token").Create(t.Context(), objs[0], tr); err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

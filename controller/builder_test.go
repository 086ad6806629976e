package controller_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopcontroller "github.com/kopgo/kopgo/controller"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/owners"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

var (
	cluster *testkit.Cluster
	scheme  = widget.Scheme()
)

func TestMain(m *testing.M) {
	if os.Getenv(killedOperatorEnv) != "" {
		os.Exit(killedOperatorMain()) // a child process of TestSIGKILLedOperatorCleansUpAfterRestart
	}
	testkit.Main(m, testkit.Options{Scheme: scheme, CRDs: []*apiextensionsv1.CustomResourceDefinition{widget.CRD()}},
		func(c *testkit.Cluster) { cluster = c })
}

func freePort(t *testing.T) int {
	t.Helper()
	ports, err := testkit.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return ports[0]
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	testkit.Eventually(t, timeout, what, func(context.Context) error { return cond() })
}

func get(url string) (int, string, error) {
	resp, err := http.Get(url) //nolint:noctx // a test probe with the client's default timeout
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// run starts b.Run in the background and stops it at the end of the test.
func run[T client.Object](t *testing.T, b *kopcontroller.Builder[T]) (cancel func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
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
	return cancel
}

// childMaker reconciles a Widget by making a ConfigMap it controls.
func childMaker(reconciles *atomic.Int32) reconciler.Func[*widget.Widget] {
	return func(ctx context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
		reconciles.Add(1)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + "-child"}}
		if err := owners.SetController(w, cm, env.Scheme); err != nil {
			return reconciler.Done(), err
		}
		if err := env.Client.Create(ctx, cm); err != nil && koperrors.KindOf(err) != koperrors.AlreadyExists {
			return reconciler.Done(), err
		}
		return reconciler.Done(), nil
	}
}

func TestRunWiresProbesMetricsWatchesAndSelector(t *testing.T) {
	ns := cluster.Namespace(t)
	health, metrics := freePort(t), freePort(t)
	var reconciles atomic.Int32
	run(t, kopcontroller.New[*widget.Widget]("widgets", childMaker(&reconciles)).
		Config(cluster.Config).Scheme(scheme).
		HealthPort(health).MetricsPort(metrics).
		LabelSelector("team=a").
		Owns(&corev1.ConfigMap{}).
		Concurrency(2).
		ReconcileTimeout(10*time.Second).
		GracefulShutdown(5*time.Second).
		Recorder(&observability.FakeRecorder{}))

	eventually(t, 30*time.Second, "/readyz 200", func() error {
		code, body, err := get(fmt.Sprintf("http://127.0.0.1:%d/readyz", health))
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("%d %s %w", code, body, err)
		}
		return nil
	})
	if code, _, err := get(fmt.Sprintf("http://127.0.0.1:%d/healthz", health)); err != nil || code != http.StatusOK {
		t.Errorf("/healthz = %d, %v", code, err)
	}

	c := cluster.Client()
	mine := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine", Labels: map[string]string{"team": "a"}}}
	other := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other", Labels: map[string]string{"team": "b"}}}
	for _, w := range []*widget.Widget{mine, other} {
		if err := c.Create(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "the selected widget Ready with its child", func() error {
		var w widget.Widget
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(mine), &w); err != nil {
			return err
		}
		if !status.IsTrue(&w, status.Ready) {
			return fmt.Errorf("not ready: %+v", w.Status)
		}
		return c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "mine-child"}, &corev1.ConfigMap{})
	})
	// Owns: deleting the child brings the owner back, which re-creates it.
	if err := c.Delete(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine-child"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the deleted child re-created", func() error {
		return c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "mine-child"}, &corev1.ConfigMap{})
	})
	var o widget.Widget
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(other), &o); err != nil {
		t.Fatal(err)
	}
	if len(o.Status.Conditions) != 0 {
		t.Errorf("the widget outside the label selector was reconciled: %+v", o.Status)
	}

	// /metrics is HTTPS and asks the API server who may read it. The
	// metrics server may start after the first reconciles finished.
	url := fmt.Sprintf("https://127.0.0.1:%d/metrics", metrics)
	eventually(t, 30*time.Second, "the metrics server listening", func() error {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", metrics), time.Second)
		if err == nil {
			_ = conn.Close()
		}
		return err
	})
	if code, _ := scrape(t, url, ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a token = %d, want 401", code)
	}
	if code, _ := scrape(t, url, token(t, ns, "nobody", false)); code != http.StatusForbidden {
		t.Errorf("/metrics with a token not allowed to read it = %d, want 403", code)
	}
	code, body := scrape(t, url, token(t, ns, "prometheus", true))
	if code != http.StatusOK {
		t.Fatalf("/metrics with an allowed token = %d", code)
	}
	for _, series := range []string{`kopgo_reconcile_total{controller="widgets",result="success"}`, "kopgo_reconcile_duration_seconds_bucket", "controller_runtime_reconcile_total"} {
		if !strings.Contains(body, series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
}

// Readiness: 503 before the caches sync (the API server is down when the
// controller starts), 200 once they have, 503 while the API server is down,
// 200 when it is back.
func TestReadinessFollowsAPIServer(t *testing.T) {
	kit, err := testkit.Start(t.Context(), testkit.Options{Scheme: scheme, CRDs: []*apiextensionsv1.CustomResourceDefinition{widget.CRD()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kit.Stop)
	health := freePort(t)
	var reconciles atomic.Int32
	kit.StopAPIServer()
	run(t, kopcontroller.New[*widget.Widget]("widgets-readiness", childMaker(&reconciles)).
		Config(kit.Config).Scheme(scheme).HealthPort(health).Recorder(&observability.FakeRecorder{}))
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", health)
	want := func(code int) func() error {
		return func() error {
			got, body, err := get(readyz)
			if err != nil || got != code {
				return fmt.Errorf("%d %s %w", got, body, err)
			}
			return nil
		}
	}
	eventually(t, 30*time.Second, "alive and unready before the caches sync", want(http.StatusServiceUnavailable))
	if code, _, err := get(fmt.Sprintf("http://127.0.0.1:%d/healthz", health)); err != nil || code != http.StatusOK {
		t.Errorf("/healthz before sync = %d, %v, want 200", code, err)
	}
	if err := kit.StartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "ready after the caches sync", want(http.StatusOK))
	kit.StopAPIServer()
	eventually(t, 30*time.Second, "unready while the API server is down", want(http.StatusServiceUnavailable))
	if err := kit.StartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "ready again", want(http.StatusOK))
}

// Two replicas with leader election: only the leader reconciles; when it
// stops, the other takes over within the lease timing.
func TestLeaderElectionHandsOver(t *testing.T) {
	ns := cluster.Namespace(t)
	var first, second atomic.Int32
	// Controller names are unique per process; real replicas are separate
	// processes with the same name.
	build := func(name string, counter *atomic.Int32) *kopcontroller.Builder[*widget.Widget] {
		return kopcontroller.New[*widget.Widget](name, childMaker(counter)).
			Config(cluster.Config).Scheme(scheme).Recorder(&observability.FakeRecorder{}).
			LabelSelector("le="+ns).
			LeaderElection(ns, "widgets-leader").
			LeaderElectionTimings(3*time.Second, 2*time.Second, 200*time.Millisecond)
	}
	stopFirst := run(t, build("widgets-replica-1", &first))
	c := cluster.Client()
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w", Labels: map[string]string{"le": ns}}}
	if err := c.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the first replica leads and reconciles", func() error {
		if first.Load() == 0 {
			return fmt.Errorf("no reconcile yet")
		}
		return nil
	})
	run(t, build("widgets-replica-2", &second))
	time.Sleep(time.Second)
	if second.Load() != 0 {
		t.Fatalf("the standby replica reconciled %d times while the leader ran", second.Load())
	}
	stopFirst()
	start := time.Now()
	eventually(t, 30*time.Second, "the second replica takes over", func() error {
		if second.Load() == 0 {
			return fmt.Errorf("no reconcile by the second replica yet")
		}
		return nil
	})
	t.Logf("takeover after %s", time.Since(start).Round(100*time.Millisecond))
}

func TestMistakesAreReturnedNotPanicked(t *testing.T) {
	tests := []struct {
		name string
		b    *kopcontroller.Builder[*widget.Widget]
		want string
	}{
		{"nil reconciler", kopcontroller.New[*widget.Widget]("w", nil), "reconciler is nil"},
		{"bad selector", kopcontroller.New[*widget.Widget]("w", reconciler.Func[*widget.Widget](nil)).LabelSelector("a in (b"), "label selector"},
		{"concurrency", kopcontroller.New[*widget.Widget]("w", reconciler.Func[*widget.Widget](nil)).Concurrency(0), "concurrency 0"},
		{"port clash", kopcontroller.New[*widget.Widget]("w", reconciler.Func[*widget.Widget](nil)).HealthPort(9000).MetricsPort(9000), "both on port 9000"},
		{"nil mapper", kopcontroller.New[*widget.Widget]("w", reconciler.Func[*widget.Widget](nil)).Watch(&corev1.Secret{}, nil), "nil mapper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.b.Config(cluster.Config).Scheme(scheme).Run(t.Context())
			if koperrors.KindOf(err) != koperrors.Config || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run = %v, want a Config error containing %q", err, tt.want)
			}
		})
	}
}

// scrape GETs url over TLS (the metrics server's self-signed certificate)
// with a bearer token, if any.
func scrape(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the metrics server's certificate is self-signed
	}}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// token returns a token of a new service account, allowed to GET /metrics
// or not.
func token(t *testing.T, ns, name string, allowed bool) string {
	t.Helper()
	c := cluster.Client()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Create(t.Context(), sa); err != nil {
		t.Fatal(err)
	}
	if allowed {
		grant(t, "system:serviceaccount:"+ns+":"+name, []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}})
	}
	tr := &authenticationv1.TokenRequest{}
	if err := c.SubResource("token").Create(t.Context(), sa, tr); err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

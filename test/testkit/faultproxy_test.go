package testkit_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/test/testkit"
)

func startFaultProxy(t *testing.T, cfg *rest.Config, f testkit.Faults) *testkit.FaultProxy {
	t.Helper()
	p, err := testkit.StartFaultProxy(cfg, f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { t.Logf("fault proxy: %v", p.Stats()) })
	t.Cleanup(p.Close)
	return p
}

// proxyClient is a controller-runtime client through p that has done its
// discovery, so that the faults a test sets afterwards meet only its own
// requests.
func proxyClient(t *testing.T, p *testkit.FaultProxy) client.Client {
	t.Helper()
	c, err := client.New(p.Config(), client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "warm-up"}, &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("warm-up Get through the proxy: %v, want NotFound", err)
	}
	return c
}

// clientset is a client-go clientset through p.
func clientset(t *testing.T, p *testkit.FaultProxy) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(p.Config())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// getNoRetries gets ConfigMap ns/name with client-go's own retries (of 429s
// and of GETs whose connection was reset) turned off, so that the caller
// sees what the proxy answered.
func getNoRetries(ctx context.Context, cs kubernetes.Interface, ns, name string) error {
	return cs.CoreV1().RESTClient().Get().Namespace(ns).Resource("configmaps").Name(name).MaxRetries(0).Do(ctx).Error()
}

func configMap(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"k": "v"}}
}

// A proxy without faults forwards with the credentials it was started with:
// a user's RBAC applies, and a kubeconfig file reaches the same server.
func TestFaultProxyForwardsWithTheConfigsIdentity(t *testing.T) {
	ns := cluster.Namespace(t)
	if err := cluster.Client().Create(t.Context(), configMap(ns, "a")); err != nil {
		t.Fatal(err)
	}

	admin := startFaultProxy(t, cluster.Config, testkit.Faults{})
	var got corev1.ConfigMap
	if err := proxyClient(t, admin).Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "a"}, &got); err != nil {
		t.Fatalf("Get through the admin proxy: %v", err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := admin.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	fileCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	fileClient, err := client.New(fileCfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := fileClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "a"}, &got); err != nil {
		t.Fatalf("Get through the proxy's kubeconfig: %v", err)
	}

	userCfg, err := cluster.UserConfig("fault-proxy-nobody")
	if err != nil {
		t.Fatal(err)
	}
	user := startFaultProxy(t, userCfg, testkit.Faults{})
	if err := getNoRetries(t.Context(), clientset(t, user), ns, "a"); !apierrors.IsForbidden(err) {
		t.Errorf("Get as a user without permissions through the proxy: %v, want Forbidden", err)
	}
	if s := admin.Stats(); s.Requests == 0 || s.Forwarded != s.Requests || s.Injected() != 0 {
		t.Errorf("Stats = %+v, want every request forwarded and no fault", s)
	}
}

// The status faults answer as the API server would: client-go returns the
// StatusError a caller checks with apierrors; SetFaults(Faults{}) forwards
// again.
func TestFaultProxyStatusErrors(t *testing.T) {
	ns := cluster.Namespace(t)
	if err := cluster.Client().Create(t.Context(), configMap(ns, "a")); err != nil {
		t.Fatal(err)
	}
	p := startFaultProxy(t, cluster.Config, testkit.Faults{})
	c := proxyClient(t, p)
	key := client.ObjectKey{Namespace: ns, Name: "a"}

	p.SetFaults(testkit.Faults{Error500: 1})
	err := c.Get(t.Context(), key, &corev1.ConfigMap{})
	if !apierrors.IsInternalError(err) {
		t.Errorf("Get with Error500: %v, want an internal error", err)
	}
	if got := p.Stats().Error500; got != 1 {
		t.Errorf("Stats().Error500 = %d after one Get, want 1 (client-go does not retry a 500 without Retry-After)", got)
	}

	p.SetFaults(testkit.Faults{TooManyRequests: 1, RetryAfter: 2500 * time.Millisecond})
	err = getNoRetries(t.Context(), clientset(t, p), ns, "a")
	if !apierrors.IsTooManyRequests(err) {
		t.Errorf("Get with TooManyRequests: %v, want TooManyRequests", err)
	}
	if seconds, ok := apierrors.SuggestsClientDelay(err); !ok || seconds != 3 {
		t.Errorf("SuggestsClientDelay = %d, %t, want 3 (2.5s rounded up), true", seconds, ok)
	}

	// client-go itself retries 429s after Retry-After: a Get succeeds once
	// the 429s stop.
	p.SetFaults(testkit.Faults{TooManyRequests: 1})
	got := make(chan error, 1)
	go func() { got <- c.Get(t.Context(), key, &corev1.ConfigMap{}) }()
	before := p.Stats().TooManyRequests
	if err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return p.Stats().TooManyRequests >= before+2, nil
	}); err != nil {
		t.Fatalf("client-go did not retry the 429: %v", err)
	}
	p.SetFaults(testkit.Faults{})
	if err := <-got; err != nil {
		t.Errorf("Get retried by client-go until the 429s stopped: %v", err)
	}
	if err := c.Get(t.Context(), key, &corev1.ConfigMap{}); err != nil {
		t.Errorf("Get after SetFaults(Faults{}): %v", err)
	}
}

// A reset before the server leaves nothing written; a reset after it
// leaves the object written although the client saw only a connection
// error. Both fail the request with an error that is not a StatusError.
func TestFaultProxyResets(t *testing.T) {
	for _, tc := range []struct {
		name       string
		faults     testkit.Faults
		wantExists bool
	}{
		{"before server", testkit.Faults{ResetBeforeServer: 1, Match: testkit.IsWrite}, false},
		{"after server", testkit.Faults{ResetAfterServer: 1, Match: testkit.IsWrite}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			p := startFaultProxy(t, cluster.Config, testkit.Faults{})
			c := proxyClient(t, p)
			p.SetFaults(tc.faults)

			err := c.Create(t.Context(), configMap(ns, "a"))
			var status apierrors.APIStatus
			if err == nil || errors.As(err, &status) {
				t.Errorf("Create: %v, want a connection error", err)
			}
			err = cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "a"}, &corev1.ConfigMap{})
			if exists := err == nil; exists != tc.wantExists || err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("the object exists: %t (%v), want %t", exists, err, tc.wantExists)
			}
			// Reads are not writes: Match spares them.
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "a"}, &corev1.ConfigMap{}); client.IgnoreNotFound(err) != nil {
				t.Errorf("Get, which Match spares: %v", err)
			}
			s := p.Stats()
			if s.ResetBeforeServer+s.ResetAfterServer != 1 {
				t.Errorf("Stats = %v, want one reset", s)
			}
		})
	}
}

// Latency delays a request by at least the delay, and ends early when the
// client gives up.
func TestFaultProxyLatency(t *testing.T) {
	ns := cluster.Namespace(t)
	p := startFaultProxy(t, cluster.Config, testkit.Faults{})
	c := proxyClient(t, p)
	key := client.ObjectKey{Namespace: ns, Name: "none"}

	p.SetFaults(testkit.Faults{Latency: 1, Delay: 300 * time.Millisecond, Jitter: 100 * time.Millisecond})
	start := time.Now()
	if err := c.Get(t.Context(), key, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("Get: %v, want NotFound", err)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("Get took %s, want at least the 300ms delay", took)
	}

	p.SetFaults(testkit.Faults{Latency: 1, Delay: time.Hour})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if err := c.Get(ctx, key, &corev1.ConfigMap{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get with a 200ms deadline and an hour's delay: %v, want DeadlineExceeded", err)
	}
	if got := p.Stats().Latency; got != 2 {
		t.Errorf("Stats().Latency = %d, want 2", got)
	}
}

// A dropped watch ends mid-stream, after its first events; an informer
// watches again and misses nothing.
func TestFaultProxyDropWatch(t *testing.T) {
	ns := cluster.Namespace(t)
	admin := cluster.Client()
	if err := admin.Create(t.Context(), configMap(ns, "before")); err != nil {
		t.Fatal(err)
	}
	p := startFaultProxy(t, cluster.Config, testkit.Faults{DropWatch: 1, WatchLifetime: 300 * time.Millisecond})

	cs := clientset(t, p)
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	timeout := time.After(30 * time.Second)
	var events int
	for ended := false; !ended; {
		select {
		case _, ok := <-w.ResultChan():
			if ok {
				events++
			}
			ended = !ok
		case <-timeout:
			t.Fatal("the watch was not dropped within 30s")
		}
	}
	if events == 0 {
		t.Error("the watch ended before its first event, want it cut mid-stream")
	}

	informers, err := cache.New(p.Config(), cache.Options{
		Scheme: cluster.Scheme(), DefaultNamespaces: map[string]cache.Config{ns: {}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	dropped := p.Stats().DropWatch
	const n = 5
	for i := range n {
		if err := admin.Create(t.Context(), configMap(ns, "cm-"+string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // spread the writes over several watches
	}
	if err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		var list corev1.ConfigMapList
		if err := informers.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		return len(list.Items) == n+1 && p.Stats().DropWatch >= dropped+2, nil
	}); err != nil {
		t.Errorf("the informer did not see all %d ConfigMaps across dropped watches (%v): %v", n+1, p.Stats(), err)
	}
}

// Pause cuts the requests in flight and resets new ones, for the proxy's
// clients only; Resume forwards again.
func TestFaultProxyPause(t *testing.T) {
	ns := cluster.Namespace(t)
	p := startFaultProxy(t, cluster.Config, testkit.Faults{})
	c := proxyClient(t, p)
	cs := clientset(t, p)
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	p.Pause()
	select {
	case <-drain(w.ResultChan()):
	case <-time.After(30 * time.Second):
		t.Fatal("the open watch was not cut by Pause")
	}
	var status apierrors.APIStatus
	if err := getNoRetries(t.Context(), cs, ns, "none"); err == nil || errors.As(err, &status) {
		t.Errorf("Get while paused: %v, want a connection error", err)
	}
	if err := cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "none"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get by a client beside the proxy while paused: %v, want NotFound", err)
	}
	if got := p.Stats().Paused; got == 0 {
		t.Error("Stats().Paused = 0, want the reset Get counted")
	}

	p.Resume()
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "none"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get after Resume: %v, want NotFound", err)
	}
}

// drain returns a channel closed when ch is closed.
func drain[V any](ch <-chan V) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range ch {
		}
	}()
	return done
}

// Close ends open watches and delayed requests and leaves no listener and
// no goroutine.
func TestFaultProxyCloseLeavesNothing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ns := cluster.Namespace(t)
	p, err := testkit.StartFaultProxy(cluster.Config, testkit.Faults{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close() // a second Close must be harmless
	cs := clientset(t, p)
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	watchEnded := drain(w.ResultChan())
	p.SetFaults(testkit.Faults{Latency: 1, Delay: time.Hour})
	delayed := make(chan error, 1)
	go func() { delayed <- getNoRetries(t.Context(), cs, ns, "none") }()
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return p.Stats().Latency == 1, nil
	}); err != nil {
		t.Fatal("the delayed request did not reach the proxy")
	}

	p.Close()
	select {
	case <-watchEnded:
	case <-time.After(30 * time.Second):
		t.Error("the open watch did not end at Close")
	}
	select {
	case err := <-delayed:
		if err == nil {
			t.Error("the delayed request succeeded, want a connection error")
		}
	case <-time.After(30 * time.Second):
		t.Error("the delayed request did not end at Close")
	}
	host := p.Config().Host[len("http://"):]
	if conn, err := net.DialTimeout("tcp", host, 5*time.Second); err == nil {
		_ = conn.Close()
		t.Errorf("%s still accepts connections after Close", host)
	}
}

// A controller-runtime client through a moderate mix of every fault still
// gets 20 ConfigMaps created by retrying: what an operator's reconcile loop
// does, and what the reliability suite asks of a whole operator.
func TestFaultProxyClientConvergesWithRetries(t *testing.T) {
	ns := cluster.Namespace(t)
	p := startFaultProxy(t, cluster.Config, testkit.Faults{
		Seed:              1,
		ResetBeforeServer: 0.05,
		TooManyRequests:   0.05,
		Error500:          0.1,
		ResetAfterServer:  0.1,
		Latency:           0.2, Delay: 10 * time.Millisecond, Jitter: 40 * time.Millisecond,
	})
	c, err := client.New(p.Config(), client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	var failures int
	for i := range n {
		cm := configMap(ns, "cm-"+string(rune('a'+i)))
		if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			err := c.Create(ctx, cm.DeepCopy())
			if err == nil || apierrors.IsAlreadyExists(err) { // AlreadyExists: a lost answer
				return true, nil
			}
			failures++
			return false, nil
		}); err != nil {
			t.Fatalf("create %s: %v", cm.Name, err)
		}
	}
	var list corev1.ConfigMapList
	if err := cluster.Client().List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != n {
		t.Errorf("%d ConfigMaps exist, want %d", len(list.Items), n)
	}
	s := p.Stats()
	t.Logf("%d failed attempts; %v", failures, s)
	if s.Injected() == 0 || failures == 0 {
		t.Errorf("no fault met (%d failed attempts; %v): the test proves nothing", failures, s)
	}
}

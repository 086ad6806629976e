package testkit_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/test/testkit"
)

// The API server restarts on the same etcd data and certificates: a client
// made before the restart works after it and sees the data written before.
func TestAPIServerRestartKeepsClientsAndData(t *testing.T) {
	// A cluster of its own: stopping the shared API server would disturb
	// tests running in parallel.
	c, err := testkit.Start(t.Context(), testkit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop) // after the namespace's own cleanup, which needs the server
	cl := c.Client()
	ns := c.Namespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "before"}, Data: map[string]string{"k": "v"}}
	if err := cl.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}

	c.StopAPIServer()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	err = cl.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
	cancel()
	if err == nil {
		t.Fatal("Get succeeded while the API server was stopped")
	}

	if err := c.StartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	var got corev1.ConfigMap
	if err := cl.Get(t.Context(), client.ObjectKeyFromObject(cm), &got); err != nil {
		t.Fatalf("Get with the pre-restart client: %v", err)
	}
	if got.Data["k"] != "v" || got.UID != cm.UID {
		t.Errorf("after restart got data %v uid %s, want data k=v uid %s", got.Data, got.UID, cm.UID)
	}
}

// An informer cache that watched through a restart sees what is written
// after it, and stopping the API server under its open watches is prompt.
func TestAPIServerRestartUnderLiveInformer(t *testing.T) {
	c, err := testkit.Start(t.Context(), testkit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	ns := c.Namespace(t)
	informers, err := cache.New(c.Config, cache.Options{Scheme: c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = informers.Start(ctx) }()
	if _, err := informers.GetInformer(ctx, &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	if !informers.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}

	start := time.Now()
	c.StopAPIServer()
	// kube-apiserver alone waits up to a minute for open watches to drain.
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("StopAPIServer under open watches took %s, want it bounded by its grace period", d)
	}
	if err := c.StartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	after := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "after-restart"}}
	if err := c.Client().Create(t.Context(), after); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "cache sees an object created after the restart", func(ctx context.Context) error {
		return informers.Get(ctx, client.ObjectKeyFromObject(after), &corev1.ConfigMap{})
	})
}

// The kubeconfig on disk is what a person points kubectl at.
func TestKubeconfigReachesCluster(t *testing.T) {
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(testkit.BinDir(""), "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != strings.TrimSpace(string(want)) {
		t.Errorf("server version %q, want the pinned %q stamped into the binary", v.GitVersion, strings.TrimSpace(string(want)))
	}
	if _, err := cs.CoreV1().Namespaces().Get(t.Context(), "kube-system", metav1.GetOptions{}); err != nil {
		t.Errorf("get kube-system through the kubeconfig: %v", err)
	}
}

// A user from UserConfig has only the permissions RBAC gives it.
func TestUserConfigIsSubjectToRBAC(t *testing.T) {
	ns := cluster.Namespace(t)
	cfg, err := cluster.UserConfig("jane", "developers")
	if err != nil {
		t.Fatal(err)
	}
	jane, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	err = jane.List(t.Context(), &corev1.ConfigMapList{}, client.InNamespace(ns))
	if !apierrors.IsForbidden(err) {
		t.Fatalf("list without a role: got %v, want Forbidden", err)
	}
}

func TestMissingBinaryNamesMakeTarget(t *testing.T) {
	_, err := testkit.Start(t.Context(), testkit.Options{BinDir: t.TempDir()})
	if err == nil {
		t.Fatal("Start succeeded without binaries")
	}
	for _, want := range []string{"etcd is missing", "make testkit-bin", testkit.BinDirEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// A component that fails to start is reported with the end of its log.
func TestFailingComponentShowsItsLog(t *testing.T) {
	dir := t.TempDir()
	src := testkit.BinDir("")
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if err := os.Symlink(filepath.Join(src, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	// An "etcd" that prints a message and exits.
	if err := os.Remove(filepath.Join(dir, "etcd")); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho 'etcd: refusing to start: disk on fire' >&2\nexit 7\n"
	if err := os.WriteFile(filepath.Join(dir, "etcd"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := testkit.Start(t.Context(), testkit.Options{BinDir: dir})
	if err == nil {
		t.Fatal("Start succeeded with a broken etcd")
	}
	for _, want := range []string{"etcd did not become ready", "exit status 7", "disk on fire"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Start waited for its timeout instead of noticing the exit: %v", err)
	}
}

func TestCountedConfigCountsTraffic(t *testing.T) {
	cfg, traffic := cluster.CountedConfig()
	c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	var ns corev1.Namespace
	if err := c.Get(t.Context(), client.ObjectKey{Name: "default"}, &ns); err != nil {
		t.Fatal(err)
	}
	traffic.Reset()
	if err := c.Get(t.Context(), client.ObjectKey{Name: "default"}, &ns); err != nil {
		t.Fatal(err)
	}
	if n, b := traffic.Requests.Load(), traffic.Bytes.Load(); n != 1 || b == 0 {
		t.Errorf("one Get counted as %d requests and %d bytes, want 1 and more than 0", n, b)
	}

	// Writes are counted apart from reads, whatever the verb.
	ns2 := cluster.Namespace(t)
	cm := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns2, Name: "counted"}}
	}
	for _, tc := range []struct {
		name             string
		do               func(ctx context.Context) error
		requests, writes int64
	}{
		{"create", func(ctx context.Context) error { return c.Create(ctx, cm()) }, 1, 1},
		{"get", func(ctx context.Context) error { return c.Get(ctx, client.ObjectKeyFromObject(cm()), cm()) }, 1, 0},
		{"list", func(ctx context.Context) error { return c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns2)) }, 1, 0},
		{"apply", func(ctx context.Context) error {
			return c.Apply(ctx, corev1ac.ConfigMap("counted", ns2).WithData(map[string]string{"k": "v"}), client.FieldOwner("t"))
		}, 1, 1},
		{"update", func(ctx context.Context) error {
			obj := cm()
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			obj.Data["k"] = "w"
			return c.Update(ctx, obj)
		}, 2, 1},
		{"delete", func(ctx context.Context) error { return c.Delete(ctx, cm()) }, 1, 1},
	} {
		traffic.Reset()
		if err := tc.do(t.Context()); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if n, w := traffic.Requests.Load(), traffic.Writes.Load(); n != tc.requests || w != tc.writes {
			t.Errorf("%s counted as %d requests and %d writes, want %d and %d", tc.name, n, w, tc.requests, tc.writes)
		}
	}
}

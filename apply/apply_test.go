package apply_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, widget.TestkitOptions(), func(c *testkit.Cluster) { cluster = c })
}

const owner = "kopgo-test"

// counters counts the requests a client made from one config sends: all of
// them, and the PATCH requests (applies) alone.
type counters struct {
	all, patches atomic.Int64
}

type countingTransport struct {
	next http.RoundTripper
	n    *counters
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.all.Add(1)
	if r.Method == http.MethodPatch {
		c.n.patches.Add(1)
	}
	return c.next.RoundTrip(r)
}

// counted returns a copy of the cluster config whose requests are counted.
func counted() (*rest.Config, *counters) {
	n := &counters{}
	cfg := rest.CopyConfig(cluster.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return countingTransport{next: rt, n: n} }
	return cfg, n
}

// newApplier returns an Applier on a counted config, its discovery warmed up
// so that the counts that follow are of applies only.
func newApplier(t *testing.T, opts ...apply.ApplierOption) (*apply.Applier, *counters) {
	t.Helper()
	cfg, n := counted()
	a, err := apply.New(cfg, owner, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, warm := range []any{configMapAC("default", "warm-up", nil), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "warm-up"}}} {
		if _, err := a.Apply(t.Context(), warm, client.DryRunAll); err != nil && koperrors.KindOf(err) != koperrors.Invalid {
			t.Fatalf("warm-up: %v", err)
		}
	}
	n.all.Store(0)
	n.patches.Store(0)
	return a, n
}

// startCache starts an informer cache of ConfigMaps and Deployments, with
// transform as its DefaultTransform if given.
func startCache(tb testing.TB, transform ...toolscache.TransformFunc) cache.Cache {
	tb.Helper()
	opts := cache.Options{Scheme: cluster.Scheme()}
	if len(transform) > 0 {
		opts.DefaultTransform = transform[0]
	}
	c, err := cache.New(cluster.Config, opts)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	for _, obj := range []client.Object{&corev1.ConfigMap{}, &appsv1.Deployment{}} {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			tb.Fatal(err)
		}
	}
	if !c.WaitForCacheSync(ctx) {
		tb.Fatal("cache did not sync")
	}
	return c
}

// waitCached waits until the cache holds obj at resourceVersion rv.
func waitCached(tb testing.TB, c client.Reader, obj client.Object, rv string) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		if err == nil && obj.GetResourceVersion() == rv {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("cache did not reach resourceVersion %s: %v (has %s)", rv, err, obj.GetResourceVersion())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitGone waits until the cache no longer holds obj.
func waitGone(t *testing.T, c client.Reader, obj client.Object) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for koperrors.KindOf(c.Get(t.Context(), client.ObjectKeyFromObject(obj), obj)) != koperrors.NotFound {
		if time.Now().After(deadline) {
			t.Fatal("cache still has the deleted object")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func cmKey(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func configMapAC(ns, name string, data map[string]string) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(name, ns).WithData(data)
}

func configMapU(ns, name string, data map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": data}}
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func getData(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data
}

// Each input form, with and without a cache: the outcome of each step, the
// requests it sent (counted on the wire and as reported), and the object.
func TestOutcomesAndRequestCounts(t *testing.T) {
	ns := cluster.Namespace(t)
	informers := startCache(t)
	forms := []struct {
		name  string
		build func(name, value string) any
	}{
		{"apply configuration", func(n, v string) any { return configMapAC(ns, n, map[string]string{"k": v}) }},
		{"unstructured", func(n, v string) any { return configMapU(ns, n, map[string]any{"k": v}) }},
		{"typed", func(n, v string) any {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n}, Data: map[string]string{"k": v}}
		}},
	}
	for _, form := range forms {
		for _, cached := range []bool{true, false} {
			variant := "without cache"
			var opts []apply.ApplierOption
			unchangedRequests := int64(1)
			if cached {
				variant, opts, unchangedRequests = "with cache", []apply.ApplierOption{apply.WithCache(informers)}, 0
			}
			t.Run(form.name+"/"+variant, func(t *testing.T) {
				a, requests := newApplier(t, opts...)
				name := strings.ReplaceAll(form.name+"-"+variant, " ", "-")
				steps := []struct {
					name         string
					value        string
					want         apply.Outcome
					wantRequests int64
				}{
					{"create", "1", apply.Created, 1},
					{"same again", "1", apply.Unchanged, unchangedRequests},
					{"and again", "1", apply.Unchanged, unchangedRequests},
					{"change", "2", apply.Updated, 1},
					{"same again", "2", apply.Unchanged, unchangedRequests},
				}
				for _, s := range steps {
					before := requests.all.Load()
					res, err := a.Apply(t.Context(), form.build(name, s.value))
					if err != nil {
						t.Fatalf("%s: %v", s.name, err)
					}
					got := requests.all.Load() - before
					if res.Outcome != s.want || got != s.wantRequests || int64(res.Requests) != got {
						t.Errorf("%s: %s with %d requests (reported %d), want %s with %d", s.name, res.Outcome, got, res.Requests, s.want, s.wantRequests)
					}
					if res.Object() == nil {
						t.Fatalf("%s: no object in the result", s.name)
					}
					if diff := cmp.Diff(map[string]any{"k": s.value}, res.Object().Object["data"]); diff != "" {
						t.Errorf("%s: result object data (-want +got):\n%s", s.name, diff)
					}
					if diff := cmp.Diff(map[string]string{"k": s.value}, getData(t, ns, name)); diff != "" {
						t.Errorf("%s: data on the server (-want +got):\n%s", s.name, diff)
					}
					if cached {
						waitCached(t, informers, cmKey(ns, name), res.Object().GetResourceVersion())
					}
				}
			})
		}
	}
}

// Someone else changes the object: once the cache has their change, the
// next apply sends nothing when our fields are untouched (the cached
// object's managedFields and values prove it), and one request that puts
// our value back (Updated) when the change undid ours.
func TestForeignChange(t *testing.T) {
	ns := cluster.Namespace(t)
	informers := startCache(t)
	a, requests := newApplier(t, apply.WithCache(informers))
	intent := configMapAC(ns, "cm", map[string]string{"k": "1"})
	res, err := a.Apply(t.Context(), intent)
	if err != nil {
		t.Fatal(err)
	}
	waitCached(t, informers, cmKey(ns, "cm"), res.Object().GetResourceVersion())

	changes := []struct {
		name     string
		change   func(cm *corev1.ConfigMap)
		want     apply.Outcome
		requests int64
	}{
		// Another manager adds a label: our fields are untouched.
		{"foreign label", func(cm *corev1.ConfigMap) { cm.Labels = map[string]string{"someone": "else"} }, apply.Unchanged, 0},
		// Another writer removes our key (an update that removes a field
		// also removes its ownership): our apply puts it back.
		{"foreign removal", func(cm *corev1.ConfigMap) { cm.Data = map[string]string{"other": "x"} }, apply.Updated, 1},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{}
			if err := cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "cm"}, cm); err != nil {
				t.Fatal(err)
			}
			c.change(cm)
			if err := cluster.Client().Update(t.Context(), cm); err != nil {
				t.Fatal(err)
			}
			waitCached(t, informers, cmKey(ns, "cm"), cm.ResourceVersion)
			before := requests.all.Load()
			res, err := a.Apply(t.Context(), intent)
			if err != nil {
				t.Fatal(err)
			}
			if got := requests.all.Load() - before; res.Outcome != c.want || got != c.requests {
				t.Errorf("Apply = %s with %d requests, want %s with %d", res.Outcome, got, c.want, c.requests)
			}
			if got := getData(t, ns, "cm")["k"]; got != "1" {
				t.Errorf("data.k = %q, want 1", got)
			}
			waitCached(t, informers, cmKey(ns, "cm"), res.Object().GetResourceVersion())
			before = requests.all.Load()
			if res, err := a.Apply(t.Context(), intent); err != nil || res.Outcome != apply.Unchanged || requests.all.Load() != before {
				t.Errorf("then Apply = %s with %d requests, %v; want Unchanged with none", res.Outcome, requests.all.Load()-before, err)
			}
		})
	}
}

// A dry run sends one request, reports what would happen, and changes and
// remembers nothing.
func TestDryRunChangesNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	informers := startCache(t)
	a, requests := newApplier(t, apply.WithCache(informers))
	res, err := a.Apply(t.Context(), configMapAC(ns, "dry", map[string]string{"k": "v"}), client.DryRunAll)
	if err != nil || res.Outcome != apply.Created || res.Requests != 1 || requests.all.Load() != 1 {
		t.Fatalf("dry-run create = %s with %d requests, %v; want Created with 1", res.Outcome, requests.all.Load(), err)
	}
	if err := cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "dry"}, &corev1.ConfigMap{}); koperrors.KindOf(err) != koperrors.NotFound {
		t.Errorf("dry run created the object: %v", err)
	}
	if apply.Remembered(a) != 0 {
		t.Errorf("dry run was remembered")
	}

	res, err = a.Apply(t.Context(), configMapAC(ns, "dry", map[string]string{"k": "v"}))
	if err != nil {
		t.Fatal(err)
	}
	waitCached(t, informers, cmKey(ns, "dry"), res.Object().GetResourceVersion())
	tests := []struct {
		name  string
		value string
		want  apply.Outcome
	}{
		{"same intent", "v", apply.Unchanged},
		{"new value", "w", apply.Updated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := requests.all.Load()
			got, err := a.Apply(t.Context(), configMapAC(ns, "dry", map[string]string{"k": tt.value}), client.DryRunAll)
			if err != nil || got.Outcome != tt.want || requests.all.Load()-before != 1 {
				t.Errorf("dry run = %s with %d requests, %v; want %s with 1", got.Outcome, requests.all.Load()-before, err, tt.want)
			}
			cm := &corev1.ConfigMap{}
			if err := cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "dry"}, cm); err != nil {
				t.Fatal(err)
			}
			if cm.ResourceVersion != res.Object().GetResourceVersion() || cm.Data["k"] != "v" {
				t.Errorf("dry run changed the object: resourceVersion %s (was %s), data %v", cm.ResourceVersion, res.Object().GetResourceVersion(), cm.Data)
			}
		})
	}
}

// frozenReader serves, for one key, a copy taken when freeze was called, as a
// cache that has not received the writes since; everything else from the
// cache itself.
type frozenReader struct {
	client.Reader
	key    client.ObjectKey
	frozen atomic.Pointer[corev1.ConfigMap]
}

func (f *frozenReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if cm, ok := obj.(*corev1.ConfigMap); ok && key == f.key {
		if frozen := f.frozen.Load(); frozen != nil {
			frozen.DeepCopyInto(cm)
			return nil
		}
	}
	return f.Reader.Get(ctx, key, obj, opts...)
}

// Our own write the cache has not received yet: applying the previous
// intent again (a revert) is sent, although the cache's older copy holds it.
func TestOwnWriteNotYetCached(t *testing.T) {
	ns := cluster.Namespace(t)
	informers := startCache(t, apply.KeepManagedFields(owner))
	lagging := &frozenReader{Reader: informers, key: client.ObjectKey{Namespace: ns, Name: "cm"}}
	a, requests := newApplier(t, apply.WithCache(lagging))
	res, err := a.Apply(t.Context(), configMapAC(ns, "cm", map[string]string{"k": "a"}))
	if err != nil {
		t.Fatal(err)
	}
	cached := cmKey(ns, "cm")
	waitCached(t, informers, cached, res.Object().GetResourceVersion())
	lagging.frozen.Store(cached)
	steps := []struct {
		value string
		want  apply.Outcome
	}{
		{"b", apply.Updated},
		{"a", apply.Updated}, // the cache's copy holds "a", the server "b"
	}
	for _, s := range steps {
		before := requests.all.Load()
		res, err := a.Apply(t.Context(), configMapAC(ns, "cm", map[string]string{"k": s.value}))
		if got := requests.all.Load() - before; err != nil || res.Outcome != s.want || got != 1 {
			t.Errorf("apply %s = %s with %d requests, %v; want %s with 1", s.value, res.Outcome, got, err, s.want)
		}
		if got := getData(t, ns, "cm")["k"]; got != s.value {
			t.Errorf("after apply %s, data.k on the server = %q", s.value, got)
		}
	}
}

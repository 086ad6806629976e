package apply_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, testkit.Options{}, func(c *testkit.Cluster) { cluster = c })
}

const owner = "kopgo-test"

// counted returns a copy of the cluster config whose requests are counted.
func counted() (*rest.Config, *atomic.Int64) {
	cfg, traffic := cluster.CountedConfig()
	return cfg, &traffic.Requests
}

func newApplier(t *testing.T, opts ...apply.ApplierOption) (*apply.Applier, *atomic.Int64) {
	t.Helper()
	cfg, n := counted()
	a, err := apply.New(cfg, owner, append([]apply.ApplierOption{apply.WithScheme(cluster.Scheme())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	// Warm the RESTMapper so discovery is not counted.
	_, _ = a.Apply(t.Context(), configMapAC("default", "warm-up", nil), apply.DryRun(true))
	n.Store(0)
	return a, n
}

func startCache(t *testing.T) cache.Cache {
	t.Helper()
	return startCacheB(t)
}

func startCacheB(tb testing.TB) cache.Cache {
	tb.Helper()
	c, err := cache.New(cluster.Config, cache.Options{Scheme: cluster.Scheme()})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	if _, err := c.GetInformer(ctx, &corev1.ConfigMap{}); err != nil {
		tb.Fatal(err)
	}
	if _, err := c.GetInformer(ctx, &appsv1.Deployment{}); err != nil {
		tb.Fatal(err)
	}
	if !c.WaitForCacheSync(ctx) {
		tb.Fatal("cache did not sync")
	}
	return c
}

// waitCached waits until the cache holds the object at resourceVersion rv.
func waitCached(t *testing.T, c client.Reader, obj client.Object, rv string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.Get(t.Context(), client.ObjectKeyFromObject(obj), obj)
		if err == nil && obj.GetResourceVersion() == rv {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cache did not reach resourceVersion %s: %v (has %s)", rv, err, obj.GetResourceVersion())
		}
		time.Sleep(20 * time.Millisecond)
	}
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

func TestOutcomesAndRequestCounts(t *testing.T) {
	ns := cluster.Namespace(t)
	informers := startCache(t)
	withCache, cachedRequests := newApplier(t, apply.WithCache(informers))
	without, plainRequests := newApplier(t)
	type step struct {
		name         string
		obj          any
		want         apply.Outcome
		wantRequests int64
	}
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
		for _, variant := range []struct {
			name     string
			a        *apply.Applier
			requests *atomic.Int64
			cached   bool
		}{{"with cache", withCache, cachedRequests, true}, {"without cache", without, plainRequests, false}} {
			t.Run(form.name+"/"+variant.name, func(t *testing.T) {
				name := strings.ReplaceAll(form.name+"-"+variant.name, " ", "-")
				unchangedRequests := int64(1)
				if variant.cached {
					unchangedRequests = 0
				}
				steps := []step{
					{"create", form.build(name, "1"), apply.Created, 1},
					{"same again", form.build(name, "1"), apply.Unchanged, unchangedRequests},
					{"change", form.build(name, "2"), apply.Updated, 1},
					{"same again", form.build(name, "2"), apply.Unchanged, unchangedRequests},
				}
				for _, s := range steps {
					before := variant.requests.Load()
					res, err := variant.a.Apply(t.Context(), s.obj)
					if err != nil {
						t.Fatalf("%s: %v", s.name, err)
					}
					if got := variant.requests.Load() - before; res.Outcome != s.want || got != s.wantRequests || int64(res.Requests) != got {
						t.Errorf("%s: outcome %s with %d requests (reported %d), want %s with %d", s.name, res.Outcome, got, res.Requests, s.want, s.wantRequests)
					}
					if res.Object != nil && variant.cached {
						waitCached(t, informers, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, res.Object.GetResourceVersion())
					}
				}
			})
		}
	}
}

// Someone else changes the object: the next apply sends one request, and
// tells an untouched intent (Unchanged) from one the change undid (Updated).
func TestForeignChange(t *testing.T) {
	ns := cluster.Namespace(t)
	informers := startCache(t)
	a, requests := newApplier(t, apply.WithCache(informers))
	res, err := a.Apply(t.Context(), configMapAC(ns, "cm", map[string]string{"k": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	waitCached(t, informers, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}, res.Object.GetResourceVersion())

	// A label from another manager: our fields are untouched.
	if err := cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "cm"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Labels = map[string]string{"someone": "else"}
	if err := cluster.Client().Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	waitCached(t, informers, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}, cm.ResourceVersion)
	before := requests.Load()
	res, err = a.Apply(t.Context(), configMapAC(ns, "cm", map[string]string{"k": "1"}))
	if err != nil || res.Outcome != apply.Unchanged || requests.Load()-before != 1 {
		t.Errorf("after a foreign label: %s, %d requests, %v; want Unchanged with 1 request", res.Outcome, requests.Load()-before, err)
	}

	// Another writer changes a field we own, and so takes it over: our
	// apply reports the conflict, and with Force puts the value back.
	cm.Data["k"] = "tampered"
	if err := cluster.Client().Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	waitCached(t, informers, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}, cm.ResourceVersion)
	_, err = a.Apply(t.Context(), configMapAC(ns, "cm", map[string]string{"k": "1"}))
	if !koperrors.IsInvalid(err) || !strings.Contains(err.Error(), ".data.k") {
		t.Errorf("after tampering: %v; want an Invalid conflict naming .data.k", err)
	}
	res, err = a.Apply(t.Context(), configMapAC(ns, "cm", map[string]string{"k": "1"}), apply.Force(true))
	if err != nil || res.Outcome != apply.Updated {
		t.Errorf("forced after tampering: %s, %v; want Updated", res.Outcome, err)
	}
}

// A Deployment applied as a typed object with nil replicas, next to an HPA
// that owns spec.replicas: applying ours again never takes them back, and
// the typed struct's zero values (status, creationTimestamp: null, empty
// non-pointer structs) are not owned by us.
func TestTypedObjectDoesNotOwnUnsetFields(t *testing.T) {
	ns := cluster.Namespace(t)
	a, _ := newApplier(t)
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
	for range 2 {
		if _, err := a.Apply(t.Context(), d.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		hpa := appsv1ac.Deployment("web", ns).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(5))
		if err := cluster.Client().Apply(t.Context(), hpa, client.FieldOwner("hpa"), client.ForceOwnership); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Apply(t.Context(), d.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	var got appsv1.Deployment
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(d), &got); err != nil {
		t.Fatal(err)
	}
	if *got.Spec.Replicas != 5 {
		t.Errorf("replicas = %d, want the HPA's 5", *got.Spec.Replicas)
	}
	for _, mf := range got.ManagedFields {
		if mf.Manager != owner {
			continue
		}
		fields := mf.FieldsV1.GetRawString()
		for _, unwanted := range []string{`"f:replicas"`, `"f:status"`, `"f:creationTimestamp"`, `"f:strategy"`, `"f:resources"`} {
			if strings.Contains(fields, unwanted) {
				t.Errorf("%s owns %s: %s", owner, unwanted, fields)
			}
		}
	}
}

func TestBadInputSendsNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	a, requests := newApplier(t)
	noKind := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "namespace": ns}}}
	unknown := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget"}}
	unknown.SetName("w")
	unknown.SetNamespace(ns)
	tests := []struct {
		name string
		obj  any
		want string
	}{
		{"no name", configMapAC(ns, "", nil), "metadata.name is required"},
		{"no kind", noKind, "apiVersion and kind are required"},
		{"unknown kind", unknown, "kind example.com/v1, Kind=Widget is not served"},
		{"no namespace", configMapAC("", "cm", nil), "metadata.namespace is required: ConfigMap is namespaced"},
		{"namespace on cluster kind", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns}}, `metadata.namespace "` + ns + `" must be empty: Namespace is cluster-scoped`},
		{"not an object", 42, "cannot apply a int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := requests.Load()
			_, err := a.Apply(t.Context(), tt.obj)
			if !koperrors.IsInvalid(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Apply = %v, want Invalid containing %q", err, tt.want)
			}
			if n := requests.Load() - before; n != 0 && tt.name != "unknown kind" {
				t.Errorf("%d requests sent", n)
			}
		})
	}
	if _, err := apply.New(cluster.Config, ""); !koperrors.IsConfig(err) {
		t.Errorf("New without field owner = %v, want Config", err)
	}
}

func TestConflictAndForce(t *testing.T) {
	ns := cluster.Namespace(t)
	a, _ := newApplier(t)
	other := configMapAC(ns, "cm", map[string]string{"k": "theirs"})
	if err := cluster.Client().Apply(t.Context(), other, client.FieldOwner("other-manager")); err != nil {
		t.Fatal(err)
	}
	_, err := a.Apply(t.Context(), configMapAC(ns, "cm", map[string]string{"k": "ours"}))
	if !koperrors.IsInvalid(err) || !strings.Contains(err.Error(), "other-manager") {
		t.Errorf("conflicting apply = %v, want Invalid naming other-manager", err)
	}
	res, err := a.Apply(t.Context(), configMapAC(ns, "cm", map[string]string{"k": "ours"}), apply.Force(true))
	if err != nil || res.Outcome != apply.Updated {
		t.Errorf("forced apply = %s, %v", res.Outcome, err)
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	a, _ := newApplier(t)
	res, err := a.Apply(t.Context(), configMapAC(ns, "dry", map[string]string{"k": "v"}), apply.DryRun(true))
	if err != nil || res.Outcome != apply.Created {
		t.Fatalf("dry run = %s, %v", res.Outcome, err)
	}
	err = cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "dry"}, &corev1.ConfigMap{})
	if !koperrors.IsNotFound(err) {
		t.Errorf("dry run created the object: %v", err)
	}
	if a.Remembered() != 0 {
		t.Errorf("dry run was remembered")
	}
}

func TestMemoryIsBoundedAndFreed(t *testing.T) {
	ns := cluster.Namespace(t)
	informers := startCache(t)
	a, _ := newApplier(t, apply.WithCache(informers), apply.WithMaxRecords(3))
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		if _, err := a.Apply(t.Context(), configMapAC(ns, n, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.Remembered(); got != 3 {
		t.Errorf("remembers %d objects, want the cap of 3", got)
	}
	// A deleted object is forgotten when the cache says it is gone, and
	// applying it again creates it.
	gone := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "e"}}
	if err := cluster.Client().Delete(t.Context(), gone); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !koperrors.IsNotFound(informers.Get(t.Context(), client.ObjectKeyFromObject(gone), &corev1.ConfigMap{})) {
		if time.Now().After(deadline) {
			t.Fatal("cache still has the deleted object")
		}
		time.Sleep(20 * time.Millisecond)
	}
	res, err := a.Apply(t.Context(), configMapAC(ns, "e", nil))
	if err != nil || res.Outcome != apply.Created {
		t.Errorf("re-apply after delete = %s, %v, want Created", res.Outcome, err)
	}
	a.Forget(gone)
	if got := a.Remembered(); got != 2 {
		t.Errorf("remembers %d after Forget, want 2", got)
	}
}

package resources_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/resources"
	"github.com/kopgo/kopgo/scope"
	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, testkit.Options{}, func(c *testkit.Cluster) { cluster = c })
}

// countingClient counts requests and the bytes of responses.
func countingClient(t *testing.T) (client.Client, *atomic.Int64, *atomic.Int64) {
	t.Helper()
	cfg, traffic := cluster.CountedConfig()
	c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "warm-up"}, &corev1.ConfigMap{})
	_ = c.Get(t.Context(), client.ObjectKey{Name: "warm-up"}, &corev1.Namespace{})
	traffic.Reset()
	return c, &traffic.Requests, &traffic.Bytes
}

func configMaps(t *testing.T, ns string, names ...string) {
	t.Helper()
	for _, n := range names {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n, Labels: map[string]string{"app": n[:1]}},
			Data: map[string]string{"payload": strings.Repeat("x", 4096)}}
		if err := cluster.Client().Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGetFindList(t *testing.T) {
	ns := cluster.Namespace(t)
	configMaps(t, ns, "a1", "a2", "b1")
	c := cluster.Client()

	var cm corev1.ConfigMap
	if err := resources.Get(t.Context(), c, scope.Namespaced(ns), "a1", &cm); err != nil || cm.Name != "a1" {
		t.Fatalf("Get = %v (%s)", err, cm.Name)
	}
	err := resources.Get(t.Context(), c, scope.Namespaced(ns), "missing", &corev1.ConfigMap{})
	if !koperrors.IsNotFound(err) || !strings.Contains(err.Error(), "get ConfigMap "+ns+"/missing") {
		t.Errorf("Get missing = %v", err)
	}
	if found, err := resources.Find(t.Context(), c, scope.Namespaced(ns), "missing", &corev1.ConfigMap{}); found || err != nil {
		t.Errorf("Find missing = %t, %v", found, err)
	}
	var list corev1.ConfigMapList
	if err := resources.List(t.Context(), c, scope.Namespaced(ns), &list, client.MatchingLabels{"app": "a"}); err != nil || len(list.Items) != 2 {
		t.Errorf("List with selector = %v, %d items", err, len(list.Items))
	}
	var all corev1.ConfigMapList
	if err := resources.List(t.Context(), c, scope.AllNamespaces, &all, client.MatchingFields{"metadata.name": "b1"}); err != nil || len(all.Items) != 1 {
		t.Errorf("List across namespaces by field = %v, %d items", err, len(all.Items))
	}
	var roles rbacv1.ClusterRoleList
	if err := resources.List(t.Context(), c, scope.Cluster, &roles); err != nil || len(roles.Items) == 0 {
		t.Errorf("List cluster-scoped = %v, %d items", err, len(roles.Items))
	}
}

func TestScopeMistakesSendNothing(t *testing.T) {
	c, requests, _ := countingClient(t)
	errs := []error{
		resources.Get(t.Context(), c, scope.Cluster, "x", &corev1.ConfigMap{}),
		resources.List(t.Context(), c, scope.Namespaced("default"), &rbacv1.ClusterRoleList{}),
		resources.List(t.Context(), c, scope.Namespaced(""), &corev1.ConfigMapList{}),
	}
	_, err := resources.Find(t.Context(), c, scope.Cluster, "x", &appsv1.Deployment{})
	errs = append(errs, err)
	for i, err := range errs {
		if !koperrors.IsInvalid(err) {
			t.Errorf("mistake %d: %v, want Invalid", i, err)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests sent for scope mistakes, want 0", n)
	}
}

func TestNamesSendsMetadataOnly(t *testing.T) {
	ns := cluster.Namespace(t)
	configMaps(t, ns, "a1", "a2", "b1")
	c, requests, bytes := countingClient(t)
	names, err := resources.Names(t.Context(), c, scope.Namespaced(ns), corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if err != nil {
		t.Fatal(err)
	}
	var want []types.NamespacedName
	for _, n := range []string{"a1", "a2", "b1"} {
		want = append(want, types.NamespacedName{Namespace: ns, Name: n})
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if n, b := requests.Load(), bytes.Load(); n != 1 || b == 0 || b >= 3*4096 {
		t.Errorf("Names sent %d requests and received %d bytes; want 1 request and less than the 12 KiB of data", n, b)
	}
}

func TestDelete(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	configMaps(t, ns, "a1")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a1"}}
	if deleted, err := resources.Delete(t.Context(), c, cm); !deleted || err != nil {
		t.Errorf("Delete = %t, %v", deleted, err)
	}
	if deleted, err := resources.Delete(t.Context(), c, cm); deleted || err != nil {
		t.Errorf("Delete of a gone object = %t, %v, want false, nil", deleted, err)
	}
	// A UID precondition protects an object re-created under the same name.
	configMaps(t, ns, "a2")
	var old corev1.ConfigMap
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "a2"}, &old); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(t.Context(), &old); err != nil {
		t.Fatal(err)
	}
	configMaps(t, ns, "a2")
	uid := old.UID
	deleted, err := resources.Delete(t.Context(), c, &old, client.Preconditions{UID: &uid})
	if deleted || !koperrors.IsConflict(err) {
		t.Errorf("Delete with a stale UID = %t, %v, want false and a Conflict", deleted, err)
	}
	if found, _ := resources.Find(t.Context(), c, scope.Namespaced(ns), "a2", &corev1.ConfigMap{}); !found {
		t.Error("the re-created object was deleted")
	}
}

func TestLabelsAndAnnotations(t *testing.T) {
	ns := cluster.Namespace(t)
	configMaps(t, ns, "a1")
	c, requests, _ := countingClient(t)
	var mine corev1.ConfigMap
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "a1"}, &mine); err != nil {
		t.Fatal(err)
	}
	// Someone else changes data and adds a label after we read.
	var theirs corev1.ConfigMap
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(&mine), &theirs); err != nil {
		t.Fatal(err)
	}
	theirs.Data["other"] = "1"
	theirs.Labels["theirs"] = "1"
	if err := cluster.Client().Update(t.Context(), &theirs); err != nil {
		t.Fatal(err)
	}
	requests.Store(0)
	if changed, err := resources.SetLabels(t.Context(), c, &mine, map[string]string{"tier": "web"}); !changed || err != nil {
		t.Fatalf("SetLabels on a stale object = %t, %v (must not conflict)", changed, err)
	}
	if changed, err := resources.SetLabels(t.Context(), c, &mine, map[string]string{"tier": "web"}); changed || err != nil {
		t.Errorf("SetLabels again = %t, %v, want no change", changed, err)
	}
	if changed, err := resources.RemoveLabels(t.Context(), c, &mine, "app", "absent"); !changed || err != nil {
		t.Errorf("RemoveLabels = %t, %v", changed, err)
	}
	if changed, err := resources.SetAnnotations(t.Context(), c, &mine, map[string]string{"example.com/note": "x"}); !changed || err != nil {
		t.Errorf("SetAnnotations = %t, %v", changed, err)
	}
	if changed, err := resources.RemoveAnnotations(t.Context(), c, &mine, "example.com/note"); !changed || err != nil {
		t.Errorf("RemoveAnnotations = %t, %v", changed, err)
	}
	if n := requests.Load(); n != 4 {
		t.Errorf("%d requests for 4 changes and 1 no-op, want 4", n)
	}
	var got corev1.ConfigMap
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(&mine), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"theirs": "1", "tier": "web"}, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if got.Data["other"] != "1" || len(got.Annotations) != 0 {
		t.Errorf("other fields changed: data %v annotations %v", got.Data, got.Annotations)
	}
}

func TestPoll(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "later"}}
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = c.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "later"}, Data: map[string]string{"ready": "yes"}})
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	err := resources.Poll(ctx, c, cm, func(obj client.Object) (bool, error) {
		return obj.(*corev1.ConfigMap).Data["ready"] == "yes", nil
	})
	if err != nil {
		t.Fatalf("Poll = %v", err)
	}

	short, cancel2 := context.WithTimeout(t.Context(), 600*time.Millisecond)
	defer cancel2()
	err = resources.Poll(short, c, cm, func(client.Object) (bool, error) { return false, nil })
	if !koperrors.IsTimeout(err) || !strings.Contains(err.Error(), "poll ConfigMap "+ns+"/later") || !strings.Contains(err.Error(), "condition not met") {
		t.Errorf("Poll past its deadline = %v", err)
	}

	if err := c.Delete(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	if err := resources.PollUntilGone(ctx, c, cm); err != nil {
		t.Errorf("PollUntilGone = %v", err)
	}
}

func TestEnsureNamespace(t *testing.T) {
	name := cluster.Namespace(t) + "-extra"
	c := cluster.Client()
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	for i, want := range []bool{true, false} {
		created, err := resources.EnsureNamespace(t.Context(), c, name, map[string]string{"team": "a"})
		if err != nil || created != want {
			t.Errorf("call %d: EnsureNamespace = %t, %v, want %t", i, created, err, want)
		}
	}
}

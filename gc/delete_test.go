package gc_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/gc"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/test/testkit"
)

// Delete deletes typed objects the caller holds, as Collect would: a plain
// one goes, one re-created under its name since it was read is left alone,
// and one waiting on finalizers loses only ours and is reported stuck.
// It counts requests: no list is sent.
func TestDeleteObjectsAlreadyRead(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	plain := create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}})
	held := create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held", Finalizers: []string{ours, foreign}}})
	stale := create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stale"}})
	staleCopy := stale.DeepCopy()
	if err := c.Delete(t.Context(), stale); err != nil {
		t.Fatal(err)
	}
	fresh := create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stale"}})

	cfg, traffic := cluster.CountedConfig()
	counted, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	// Warm-up: a new client's first request also sends discovery.
	if err := counted.Get(t.Context(), client.ObjectKeyFromObject(fresh), &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	traffic.Reset()
	res, err := gc.Delete(t.Context(), counted, []client.Object{plain, held, staleCopy}, gc.OwnedFinalizers{ours})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"plain", "held"}, names(res.Deleted)); diff != "" {
		t.Errorf("Deleted (-want +got):\n%s", diff)
	}
	if len(res.Stuck) != 1 || res.Stuck[0].Name != "held" || !cmp.Equal(res.Stuck[0].Finalizers, []string{foreign}) {
		t.Errorf("Stuck = %+v, want held waiting on %s", res.Stuck, foreign)
	}
	// plain: delete; held: delete, read, patch; stale: the refused delete.
	if n := traffic.Requests.Load(); n != 5 {
		t.Errorf("%d requests, want 5 (no list)", n)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(plain), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("plain: Get = %v, want NotFound", err)
	}
	var got corev1.ConfigMap
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(fresh), &got); err != nil || got.UID != fresh.UID {
		t.Errorf("the re-created object: %v, uid %s (want %s)", err, got.UID, fresh.UID)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(held), &got); err != nil || !cmp.Equal(got.Finalizers, []string{foreign}) {
		t.Errorf("held: %v, finalizers %v (want only %s)", err, got.Finalizers, foreign)
	}
}

// countedClient is a client whose requests are counted, after the warm-up
// reads that let it discover the kinds used here.
func countedClient(t *testing.T) (client.Client, *testkit.Traffic) {
	t.Helper()
	cfg, traffic := cluster.CountedConfig()
	c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	for _, gvk := range []schema.GroupVersionKind{cmGVK, corev1.SchemeGroupVersion.WithKind("Namespace")} {
		if _, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			t.Fatal(err)
		}
	}
	traffic.Reset()
	return c, traffic
}

// Delete by name: the object goes and is reported, an object already gone
// is neither an error nor reported, and an unstructured object works too.
func TestDeleteByName(t *testing.T) {
	ns := cluster.Namespace(t)
	create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a1"}})
	create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a2"}})
	c, traffic := countedClient(t)
	byName := []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a1"}}}

	res, err := gc.Delete(t.Context(), c, byName)
	if err != nil || len(res.Deleted) != 1 || res.Deleted[0] != (kopmeta.ObjectRef{Kind: "ConfigMap", Namespace: ns, Name: "a1"}) {
		t.Errorf("Delete = %+v, %v; want a1 deleted", res, err)
	}
	// The delete and a read: finalizers of an object named alone are unknown.
	if n := traffic.Requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	res, err = gc.Delete(t.Context(), c, byName)
	if err != nil || len(res.Deleted) != 0 {
		t.Errorf("Delete of a gone object = %+v, %v; want nothing deleted and no error", res, err)
	}

	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(cmGVK)
	u.SetNamespace(ns)
	u.SetName("a2")
	res, err = gc.Delete(t.Context(), c, []client.Object{u}, client.GracePeriodSeconds(0), client.PropagationPolicy(metav1.DeletePropagationForeground))
	if err != nil || len(res.Deleted) != 1 {
		t.Errorf("Delete(unstructured) = %+v, %v; want a2 deleted", res, err)
	}
}

// client.Preconditions that do not hold are a Conflict, and nothing is
// deleted; ones that hold let the delete through.
func TestDeletePreconditions(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	old := create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a1"}})
	if err := c.Delete(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	current := create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a1"}})
	byName := func() []client.Object {
		return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a1"}}}
	}
	tests := []struct {
		name string
		pre  client.Preconditions
	}{
		{"stale UID", client.Preconditions{UID: &old.UID}},
		{"stale resourceVersion", client.Preconditions{UID: &current.UID, ResourceVersion: &old.ResourceVersion}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := gc.Delete(t.Context(), c, byName(), tt.pre)
			if len(res.Deleted) != 0 || koperrors.KindOf(err) != koperrors.Conflict {
				t.Errorf("Delete = %+v, %v; want nothing deleted and a Conflict", res, err)
			}
			var got corev1.ConfigMap
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(current), &got); err != nil || got.UID != current.UID || got.DeletionTimestamp != nil {
				t.Fatalf("the re-created object was touched: %v, %v", got, err)
			}
		})
	}
	res, err := gc.Delete(t.Context(), c, byName(), client.Preconditions{UID: &current.UID, ResourceVersion: &current.ResourceVersion})
	if len(res.Deleted) != 1 || err != nil {
		t.Errorf("Delete with a precondition that holds = %+v, %v; want deleted", res, err)
	}
}

// A namespace that does not fit the kind is an Invalid error before any
// request: a namespaced object without one would otherwise read as
// "already gone".
func TestDeleteChecksScope(t *testing.T) {
	c, traffic := countedClient(t)
	tests := []struct {
		name string
		obj  client.Object
		want string
	}{
		{"namespaced kind without a namespace", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}},
			"delete ConfigMap x: scope AllNamespaces cannot place an object: an object of a namespaced kind must name its namespace"},
		{"cluster-scoped kind with a namespace", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}},
			`delete Namespace default/x: metadata.namespace is "default" but the kind is cluster-scoped (scope Cluster)`},
		{"no name", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default"}},
			"delete ConfigMap default/: no name given"},
		{"invalid namespace", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "Not_A_Namespace", Name: "x"}},
			`delete ConfigMap Not_A_Namespace/x: scope Namespaced("Not_A_Namespace") is invalid`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := gc.Delete(t.Context(), c, []client.Object{tt.obj})
			if koperrors.KindOf(err) != koperrors.Invalid || !strings.HasPrefix(err.Error(), tt.want) || len(res.Deleted) != 0 {
				t.Errorf("Delete = %+v, %v; want an Invalid error %q", res, err, tt.want)
			}
		})
	}
	if n := traffic.Requests.Load(); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

// The options reach the server as given, Background propagation by default;
// kopgo's own options do not.
func TestDeleteOptionsSent(t *testing.T) {
	uid, rv := types.UID("u1"), "7"
	bg := ptr.To(metav1.DeletePropagationBackground)
	tests := []struct {
		name string
		obj  *corev1.ConfigMap
		opts []client.DeleteOption
		want client.DeleteOptions
	}{
		{"default", nil, nil, client.DeleteOptions{PropagationPolicy: bg}},
		{"foreground", nil, []client.DeleteOption{client.PropagationPolicy(metav1.DeletePropagationForeground)},
			client.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}},
		{"kopgo's own are not sent", nil, []client.DeleteOption{gc.OwnedFinalizers{"a/b"}, gc.Metrics{Controller: "x"}},
			client.DeleteOptions{PropagationPolicy: bg}},
		{"caller's precondition", nil, []client.DeleteOption{client.Preconditions{UID: &uid, ResourceVersion: &rv}},
			client.DeleteOptions{PropagationPolicy: bg, Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}},
		{"a read object's UID", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{UID: uid}}, []client.DeleteOption{client.Preconditions{ResourceVersion: &rv}},
			client.DeleteOptions{PropagationPolicy: bg, Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}},
		{"grace period and dry run", nil, []client.DeleteOption{client.GracePeriodSeconds(0), client.DryRunAll},
			client.DeleteOptions{PropagationPolicy: bg, GracePeriodSeconds: ptr.To[int64](0), DryRun: []string{metav1.DryRunAll}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got client.DeleteOptions
			mapper := apimeta.NewDefaultRESTMapper(nil)
			mapper.Add(cmGVK, apimeta.RESTScopeNamespace)
			c := fake.NewClientBuilder().WithRESTMapper(mapper).WithInterceptorFuncs(interceptor.Funcs{
				Delete: func(_ context.Context, _ client.WithWatch, _ client.Object, opts ...client.DeleteOption) error {
					got.ApplyOptions(opts)
					return nil
				},
				Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "x")
				},
			}).Build()
			obj := tt.obj
			if obj == nil {
				obj = &corev1.ConfigMap{}
			}
			obj.Namespace, obj.Name = "ns", "x"
			if _, err := gc.Delete(t.Context(), c, []client.Object{obj}, tt.opts...); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("options sent (-want +got):\n%s", diff)
			}
		})
	}
}

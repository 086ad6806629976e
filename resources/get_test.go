package resources_test

import (
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/resources"
	"github.com/kopgo/kopgo/scope"
)

func TestGetAndFind(t *testing.T) {
	ns := cluster.Namespace(t)
	configMaps(t, ns, "a1")
	c, tr := countedClient(t)

	cm, err := resources.Get[corev1.ConfigMap](t.Context(), c, scope.Namespaced(ns), "a1")
	if err != nil || cm.Name != "a1" || cm.Data["payload"] == "" {
		t.Fatalf("Get = %v, %v", cm, err)
	}
	if n := requests(tr); n != 1 {
		t.Errorf("Get sent %d requests, want 1", n)
	}

	missing, err := resources.Get[corev1.ConfigMap](t.Context(), c, scope.Namespaced(ns), "missing")
	if koperrors.KindOf(err) != koperrors.NotFound || missing != nil {
		t.Errorf("Get of a missing object = %v, %v; want nil and NotFound", missing, err)
	}
	var kerr *koperrors.Error
	if !errors.As(err, &kerr) || kerr.Op != "get" || kerr.Object.Kind != "ConfigMap" || kerr.Object.Namespace != ns || kerr.Object.Name != "missing" {
		t.Errorf("Get of a missing object: error %#v does not name the operation and object", kerr)
	}
	if want := "get ConfigMap " + ns + "/missing: "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Get of a missing object = %q, want prefix %q", err, want)
	}
	if n := requests(tr); n != 1 {
		t.Errorf("Get of a missing object sent %d requests, want 1", n)
	}

	got, found, err := resources.Find[corev1.ConfigMap](t.Context(), c, scope.Namespaced(ns), "missing")
	if got != nil || found || err != nil {
		t.Errorf("Find of a missing object = %v, %t, %v; want nil, false, nil", got, found, err)
	}
	got, found, err = resources.Find[corev1.ConfigMap](t.Context(), c, scope.Namespaced(ns), "a1")
	if got == nil || got.Name != "a1" || !found || err != nil {
		t.Errorf("Find = %v, %t, %v", got, found, err)
	}
	if n := requests(tr); n != 2 {
		t.Errorf("two Finds sent %d requests, want 2", n)
	}

	// Cluster-scoped kinds, and the Into forms for kinds without a Go type.
	if _, err := resources.Get[corev1.Namespace](t.Context(), c, scope.Cluster, ns); err != nil {
		t.Errorf("Get of a Namespace = %v", err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(configMapKind)
	if err := resources.GetInto(t.Context(), c, scope.Namespaced(ns), "a1", u); err != nil || u.GetUID() != cm.UID {
		t.Errorf("GetInto(unstructured) = %v (uid %s, want %s)", err, u.GetUID(), cm.UID)
	}
	pm := &metav1.PartialObjectMetadata{}
	pm.SetGroupVersionKind(configMapKind)
	if err := resources.GetInto(t.Context(), c, scope.Namespaced(ns), "a1", pm); err != nil || pm.UID != cm.UID {
		t.Errorf("GetInto(metadata) = %v (uid %s, want %s)", err, pm.UID, cm.UID)
	}
}

func TestScopeMistakesSendNothing(t *testing.T) {
	c, tr := countedClient(t)
	ctx := t.Context()
	noKind := &unstructured.Unstructured{}
	noKind.SetName("x")
	tests := []struct {
		name string
		run  func() error
		want string // the start of the message
	}{
		{"Get ConfigMap with Cluster", func() error {
			_, err := resources.Get[corev1.ConfigMap](ctx, c, scope.Cluster, "x")
			return err
		}, "get ConfigMap x: scope Cluster given for namespaced kind"},
		{"Find Deployment with AllNamespaces", func() error {
			_, _, err := resources.Find[appsv1.Deployment](ctx, c, scope.AllNamespaces, "x")
			return err
		}, "get Deployment x: scope AllNamespaces cannot name one object"},
		{"Get ClusterRole in a namespace", func() error {
			_, err := resources.Get[rbacv1.ClusterRole](ctx, c, scope.Namespaced("default"), "x")
			return err
		}, "get ClusterRole default/x: scope Namespaced(\"default\") given for cluster-scoped kind"},
		{"List ClusterRoles in a namespace", func() error {
			_, err := resources.List[rbacv1.ClusterRoleList](ctx, c, scope.Namespaced("default"))
			return err
		}, "list ClusterRole default/: scope"},
		{"List with an empty namespace", func() error {
			_, err := resources.List[corev1.ConfigMapList](ctx, c, scope.Namespaced(""))
			return err
		}, "list ConfigMap: scope Namespaced(\"\") is invalid"},
		{"List with the zero scope", func() error {
			_, err := resources.List[corev1.ConfigMapList](ctx, c, scope.Scope{})
			return err
		}, "list ConfigMap: scope is unset"},
		{"PollAny of ClusterRoles in a namespace", func() error {
			_, err := resources.PollAny(ctx, c, scope.Namespaced("default"), func(*rbacv1.ClusterRole) (bool, error) { return true, nil })
			return err
		}, "poll any ClusterRole default/: scope"},
		{"Poll a Namespace in a namespace", func() error {
			_, err := resources.Poll(ctx, c, scope.Namespaced("default"), "x", func(*corev1.Namespace) (bool, error) { return true, nil })
			return err
		}, "poll Namespace default/x: scope"},
		{"PollUntilGone a ConfigMap with Cluster", func() error {
			_, err := resources.PollUntilGone[corev1.ConfigMap](ctx, c, scope.Cluster, "x")
			return err
		}, "wait for deletion of ConfigMap x: scope Cluster"},
		{"unstructured without a kind", func() error {
			return resources.GetInto(ctx, c, scope.Cluster, "x", noKind)
		}, "get x: "},
		{"SetLabels without a name", func() error {
			_, err := resources.SetLabels(ctx, c, &corev1.ConfigMap{}, map[string]string{"a": "b"})
			return err
		}, "set labels of ConfigMap: no name given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if koperrors.KindOf(err) != koperrors.Invalid {
				t.Errorf("error = %v, want Kind Invalid", err)
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error = %q, want prefix %q", err, tt.want)
			}
			if n := requests(tr); n != 0 {
				t.Errorf("%d requests sent, want 0", n)
			}
		})
	}
}

package owners_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/owners"
	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, testkit.Options{}, func(c *testkit.Cluster) { cluster = c })
}

// References built here are accepted by the API server as they are: a
// namespaced controller and a cluster-scoped owner on one object.
func TestReferencesAcceptedByServer(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	ctrl := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "controller"}}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-owner"}}
	for _, o := range []client.Object{ctrl, role} {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = c.Delete(t.Context(), role) })
	child := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "child"}}
	if err := owners.SetController(ctrl, child, c.Scheme()); err != nil {
		t.Fatal(err)
	}
	if err := owners.SetOwner(role, child, c.Scheme()); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(t.Context(), child); err != nil {
		t.Fatal(err)
	}
	var got corev1.Secret
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(child), &got); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(&got); ref == nil || ref.UID != ctrl.UID || len(got.OwnerReferences) != 2 {
		t.Errorf("stored owner references %+v", got.OwnerReferences)
	}
}

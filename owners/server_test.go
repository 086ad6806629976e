package owners_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/owners"
	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, testkit.Options{}, func(c *testkit.Cluster) { cluster = c })
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := cluster.Client().Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
		if o.GetNamespace() == "" { // not deleted with the test's namespace
			t.Cleanup(func() { _ = cluster.Client().Delete(t.Context(), o) })
		}
	}
}

func stored(t *testing.T, obj client.Object) []metav1.OwnerReference {
	t.Helper()
	got := obj.DeepCopyObject().(client.Object)
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatal(err)
	}
	return got.GetOwnerReferences()
}

// References built here are stored by the API server as they are: a
// namespaced controller and a cluster-scoped owner on one namespaced object,
// in typed form and in server-side apply form.
func TestReferencesAcceptedByServer(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	ctrl := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "controller"}}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-owner"}}
	create(t, ctrl, role)

	typed := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "typed"}}
	if err := owners.SetController(ctrl, typed, c.Scheme()); err != nil {
		t.Fatal(err)
	}
	if err := owners.SetOwner(role, typed, c.Scheme()); err != nil {
		t.Fatal(err)
	}
	create(t, typed)

	applied := corev1ac.Secret("applied", ns)
	ctrlRef, err := owners.ControllerApplyConfiguration(ctrl, applied, c.Scheme())
	if err != nil {
		t.Fatal(err)
	}
	roleRef, err := owners.OwnerApplyConfiguration(role, applied, c.Scheme())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Apply(t.Context(), applied.WithOwnerReferences(ctrlRef, roleRef), client.FieldOwner("owners-test")); err != nil {
		t.Fatal(err)
	}

	want := typed.OwnerReferences
	if len(want) != 2 || metav1.GetControllerOf(typed).UID != ctrl.UID {
		t.Fatalf("references set: %+v", want)
	}
	if diff := cmp.Diff(want, stored(t, typed)); diff != "" {
		t.Errorf("typed: stored references (-set +stored):\n%s", diff)
	}
	if diff := cmp.Diff(want, stored(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "applied"}})); diff != "" {
		t.Errorf("applied: stored references (-typed +applied):\n%s", diff)
	}
}

// Why the checks exist: the API server stores an owner reference across
// namespaces without a word (and the garbage collector, finding no owner
// in the child's namespace, would delete the child). It does refuse a
// second controller, later and less clearly than SetController.
func TestServerAcceptsWhatCheckRefuses(t *testing.T) {
	c := cluster.Client()
	nsA, nsB := cluster.Namespace(t), cluster.Namespace(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "owner"}}
	create(t, owner)
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: new(true)}

	crossNS := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: "child", OwnerReferences: []metav1.OwnerReference{ref}}}
	if err := c.Create(t.Context(), crossNS); err != nil {
		t.Errorf("the API server refused a cross-namespace reference (%v): the checks may be redundant now", err)
	}
	if err := owners.SetController(owner, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: "child"}}, c.Scheme()); koperrors.KindOf(err) != koperrors.Invalid {
		t.Errorf("SetController across namespaces: %v, want Invalid", err)
	}

	other := ref
	other.Name, other.UID = "other", "u-other"
	two := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "two", OwnerReferences: []metav1.OwnerReference{other, ref}}}
	if err := c.Create(t.Context(), two); koperrors.KindOf(err) != koperrors.Invalid {
		t.Errorf("the API server accepted two controllers: %v", err)
	}
}

package testkit_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/test/testkit"
)

// A user bound to a Role: what it did is recorded as permissions, what it
// was refused is listed, and the rules it never needed are reported.
func TestRecordPermissions(t *testing.T) {
	ns := cluster.Namespace(t)
	admin := cluster.Client()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create", "patch", "delete"}},
		},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "cm"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "recorded"}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := admin.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	userCfg, err := cluster.UserConfig("recorded")
	if err != nil {
		t.Fatal(err)
	}
	cfg, perms := testkit.RecordPermissions(userCfg)
	c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	// A server-side apply that creates: one PATCH, needing patch and create.
	if err := c.Apply(t.Context(), corev1ac.ConfigMap("a", ns).WithData(map[string]string{"k": "v"}), client.FieldOwner("t")); err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "a"}, &cm); err != nil {
		t.Fatal(err)
	}
	if err := c.List(t.Context(), &corev1.SecretList{}, client.InNamespace(ns)); !apierrors.IsForbidden(err) {
		t.Fatalf("list Secrets: got %v, want Forbidden", err)
	}

	if got, want := fmt.Sprint(perms.Used()), "[/configmaps create /configmaps get /configmaps patch /secrets list]"; got != want {
		t.Errorf("Used = %s, want %s", got, want)
	}
	if got := perms.Denied(); len(got) != 1 || got[0] != "/secrets list (GET /api/v1/namespaces/"+ns+"/secrets)" {
		t.Errorf("Denied = %q, want the Secret list", got)
	}
	if got, want := perms.Unused(role.Rules), []testkit.Permission{{Resource: "configmaps", Verb: "delete"}}; !slices.Equal(got, want) {
		t.Errorf("Unused = %v, want %v", got, want)
	}
	if got := perms.Unused(role.Rules, testkit.Permission{Resource: "configmaps", Verb: "delete"}); len(got) != 0 {
		t.Errorf("Unused with delete allowed = %v, want none", got)
	}
	if got, want := testkit.BlockOwnerDeletion("example.com", "webapps"), (testkit.Permission{Group: "example.com", Resource: "webapps/finalizers", Verb: "update"}); got != want {
		t.Errorf("BlockOwnerDeletion = %v, want %v", got, want)
	}
}

// A create in a namespace that is being deleted is refused with 403 by the
// namespace's lifecycle, after RBAC allowed it: not a missing rule, so not
// in Denied. A refusal by RBAC in the same namespace still is.
func TestRecordPermissionsIgnoresTerminatingNamespace(t *testing.T) {
	ns := cluster.Namespace(t)
	admin := cluster.Client()
	user := strings.ToLower(t.Name())
	// Cluster-wide, so that the namespace's deletion does not remove the
	// user's permission before the create is tried.
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := admin.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = admin.Delete(context.Background(), o) })
	}
	// A finalizer nobody removes until the test ends keeps the namespace
	// Terminating.
	held := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held", Finalizers: []string{"kopgo.dev/test-hold"}}}
	if err := admin.Create(t.Context(), held); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		patch := client.MergeFrom(held.DeepCopy())
		held.Finalizers = nil
		_ = admin.Patch(context.Background(), held, patch)
	})
	if err := admin.Delete(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}

	userCfg, err := cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	cfg, perms := testkit.RecordPermissions(userCfg)
	c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "a create refused because the namespace terminates", func(ctx context.Context) error {
		err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "late-"}})
		if apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
		return errorf("create: %v", err)
	})
	if err := c.List(t.Context(), &corev1.SecretList{}, client.InNamespace(ns)); !apierrors.IsForbidden(err) {
		t.Fatalf("list Secrets: got %v, want Forbidden", err)
	}
	if got := perms.Denied(); len(got) != 1 || got[0] != "/secrets list (GET /api/v1/namespaces/"+ns+"/secrets)" {
		t.Errorf("Denied = %q, want only the Secret list (RBAC), not the create in the terminating namespace", got)
	}
	if got, want := fmt.Sprint(perms.Used()), "[/configmaps create /secrets list]"; got != want {
		t.Errorf("Used = %s, want %s", got, want)
	}
}

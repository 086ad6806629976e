package apply_test

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
)

// Without a cache, an apply with a controller reference first reads the
// object to learn its controller. An operator that may list the kind but
// not get it reads it with a list by name (the 403 remembered), as
// reconciler.Sync does, instead of failing the apply; an object someone
// else made is still refused.
func TestReadLiveListsWhenGetIsForbidden(t *testing.T) {
	ns := cluster.Namespace(t)
	user := "lister-" + ns
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "lister", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "create", "patch"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "lister", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "lister"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "parent"}}
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "someone-elses"}, Data: map[string]string{"k": "theirs"}}
	for _, o := range []client.Object{role, binding, parent, other} {
		if err := cluster.Client().Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	n := &counters{}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return countingTransport{next: rt, n: n} }
	a, err := apply.New(cfg, owner)
	if err != nil {
		t.Fatal(err)
	}
	// Discovery first, so that the counts are of the applies.
	if _, err := a.Apply(t.Context(), configMapAC(ns, "warm-up", nil), client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	child := func(name string) *corev1ac.ConfigMapApplyConfiguration {
		return corev1ac.ConfigMap(name, ns).WithData(map[string]string{"k": "mine"}).
			WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("ConfigMap").
				WithName(parent.Name).WithUID(parent.UID).WithController(true))
	}

	for i, tt := range []struct {
		name     string
		requests int64
	}{
		{"first", 3},  // the refused get, the list, the apply
		{"second", 2}, // the list, the apply: the 403 is remembered
	} {
		n.all.Store(0)
		res, err := a.Apply(t.Context(), child(tt.name))
		if err != nil || res.Outcome != apply.Created {
			t.Fatalf("apply %d: %s, %v; want Created", i, res.Outcome, err)
		}
		if got := n.all.Load(); got != tt.requests {
			t.Errorf("apply %s: %d requests, want %d", tt.name, got, tt.requests)
		}
	}

	_, err = a.Apply(t.Context(), child(other.Name))
	if koperrors.KindOf(err) != koperrors.Invalid {
		t.Errorf("apply over someone else's object = %v; want a refusal of Kind Invalid", err)
	}
	var got corev1.ConfigMap
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(other), &got); err != nil || got.Data["k"] != "theirs" || len(got.OwnerReferences) != 0 {
		t.Errorf("someone else's object after the refused apply: %v, data %v, owners %v", err, got.Data, got.OwnerReferences)
	}
}

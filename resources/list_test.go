package resources_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/resources"
	"github.com/kopgo/kopgo/scope"
)

func names(items []corev1.ConfigMap) []string {
	var out []string
	for _, cm := range items {
		out = append(out, cm.Namespace+"/"+cm.Name)
	}
	slices.Sort(out)
	return out
}

func TestList(t *testing.T) {
	ns, other := cluster.Namespace(t), cluster.Namespace(t)
	configMaps(t, ns, "a1", "a2", "b1")
	configMaps(t, other, "a3")
	c, tr := countedClient(t)
	sel, err := labels.Parse("app in (a)")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		scope scope.Scope
		opts  []client.ListOption
		want  []string
	}{
		{"namespace", scope.Namespaced(ns), nil, []string{ns + "/a1", ns + "/a2", ns + "/b1"}},
		{"namespace, label map", scope.Namespaced(ns), []client.ListOption{client.MatchingLabels{"app": "a"}}, []string{ns + "/a1", ns + "/a2"}},
		{"namespace, label selector", scope.Namespaced(ns), []client.ListOption{client.MatchingLabelsSelector{Selector: sel}}, []string{ns + "/a1", ns + "/a2"}},
		{"all namespaces, field selector", scope.AllNamespaces, []client.ListOption{client.MatchingFields{"metadata.name": "a3"}}, []string{other + "/a3"}},
		{"all namespaces, labels and fields", scope.AllNamespaces,
			[]client.ListOption{client.MatchingLabels{"app": "a"}, client.MatchingFields{"metadata.namespace": ns}}, []string{ns + "/a1", ns + "/a2"}},
		{"the scope wins over InNamespace", scope.Namespaced(other), []client.ListOption{client.InNamespace(ns)}, []string{other + "/a3"}},
		{"AllNamespaces wins over InNamespace", scope.AllNamespaces,
			[]client.ListOption{client.InNamespace(ns), client.MatchingFields{"metadata.name": "a3"}}, []string{other + "/a3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := resources.List[corev1.ConfigMapList](t.Context(), c, tt.scope, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, names(list.Items)); diff != "" {
				t.Errorf("List (-want +got):\n%s", diff)
			}
			if n := requests(tr); n != 1 {
				t.Errorf("List sent %d requests, want 1", n)
			}
		})
	}

	t.Run("cluster-scoped", func(t *testing.T) {
		roles, err := resources.List[rbacv1.ClusterRoleList](t.Context(), c, scope.Cluster, client.MatchingFields{"metadata.name": "cluster-admin"})
		if err != nil || len(roles.Items) != 1 || roles.Items[0].Name != "cluster-admin" {
			t.Errorf("List of ClusterRoles = %v, %v", roles, err)
		}
	})
}

func TestKeysAndNamesSendMetadataOnly(t *testing.T) {
	ns, other := cluster.Namespace(t), cluster.Namespace(t)
	configMaps(t, ns, "b1", "a2", "a1")
	configMaps(t, other, "a0")
	c, tr := countedClient(t)

	// What a full list of the same objects costs, to compare with.
	if _, err := resources.List[corev1.ConfigMapList](t.Context(), c, scope.Namespaced(ns)); err != nil {
		t.Fatal(err)
	}
	fullBytes := tr.Bytes.Load()
	tr.Reset()

	got, err := resources.Keys(t.Context(), c, scope.Namespaced(ns), configMapKind)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]types.NamespacedName{{Namespace: ns, Name: "a1"}, {Namespace: ns, Name: "a2"}, {Namespace: ns, Name: "b1"}}, got); diff != "" {
		t.Errorf("Keys (-want +got):\n%s", diff)
	}
	n, b := tr.Requests.Load(), tr.Bytes.Load()
	t.Logf("Keys: %d request, %d bytes; a full List: %d bytes", n, b, fullBytes)
	if n != 1 || b == 0 || b >= 3*4096 || b*4 > fullBytes {
		t.Errorf("Keys sent %d requests and received %d bytes (a full List: %d); want 1 request, and not the 12 KiB of data", n, b, fullBytes)
	}
	tr.Reset()

	keys, err := resources.Keys(t.Context(), c, scope.AllNamespaces, configMapKind, client.MatchingLabels{"app": "a"})
	if err != nil {
		t.Fatal(err)
	}
	// Keep the two test namespaces only: other tests run their own.
	keys = slices.DeleteFunc(keys, func(k types.NamespacedName) bool { return k.Namespace != ns && k.Namespace != other })
	want := []types.NamespacedName{{Namespace: ns, Name: "a1"}, {Namespace: ns, Name: "a2"}, {Namespace: other, Name: "a0"}}
	if ns > other {
		want = []types.NamespacedName{{Namespace: other, Name: "a0"}, {Namespace: ns, Name: "a1"}, {Namespace: ns, Name: "a2"}}
	}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("Keys (-want +got):\n%s", diff)
	}

	// Namespaces: a cluster-scoped kind.
	nsKeys, err := resources.Keys(t.Context(), c, scope.Cluster, namespaceKind)
	if err != nil || !slices.Contains(nsKeys, types.NamespacedName{Name: ns}) || !slices.IsSortedFunc(nsKeys, func(a, b types.NamespacedName) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("Keys of Namespaces = %v, %v; want sorted and containing %s", nsKeys, err, ns)
	}
}

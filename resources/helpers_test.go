package resources_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, testkit.Options{}, func(c *testkit.Cluster) { cluster = c })
}

var (
	configMapKind   = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	namespaceKind   = corev1.SchemeGroupVersion.WithKind("Namespace")
	clusterRoleKind = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	deploymentKind  = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
)

// countedClient is a client whose requests and response bytes are counted,
// with the kinds the tests use already discovered, so that the counts are
// those of the operations alone.
func countedClient(t *testing.T) (client.Client, *testkit.Traffic) {
	t.Helper()
	cfg, traffic := cluster.CountedConfig()
	c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	for _, gvk := range []schema.GroupVersionKind{configMapKind, namespaceKind, clusterRoleKind, deploymentKind} {
		if _, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			t.Fatal(err)
		}
	}
	traffic.Reset()
	return c, traffic
}

// requests returns the number of requests sent since the last call, and
// resets the counters.
func requests(tr *testkit.Traffic) int64 {
	n := tr.Requests.Load()
	tr.Reset()
	return n
}

// configMaps creates ConfigMaps called names in ns, each labelled
// app=<first letter of its name> and carrying 4 KiB of data.
func configMaps(t *testing.T, ns string, names ...string) []*corev1.ConfigMap {
	t.Helper()
	var out []*corev1.ConfigMap
	for _, n := range names {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n, Labels: map[string]string{"app": n[:1]}},
			Data:       map[string]string{"payload": strings.Repeat("x", 4096)},
		}
		if err := cluster.Client().Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
		out = append(out, cm)
	}
	return out
}

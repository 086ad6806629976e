package gc_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/gc"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/scope"
)

func TestDeletionsAreCounted(t *testing.T) {
	ns := cluster.Namespace(t)
	for _, n := range []string{"a", "b"} {
		create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n, Labels: managed}})
	}
	reg := prometheus.NewRegistry()
	m, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	c := cluster.Client()
	if _, err := gc.Collect(t.Context(), c, cmGVK, scope.Namespaced(ns), selector, gc.OwnerExists(c), client.DryRunAll, gc.Metrics{Metrics: m, Controller: "web"}); err != nil {
		t.Fatal(err)
	}
	res, err := gc.Collect(t.Context(), c, cmGVK, scope.Namespaced(ns), selector, gc.OwnerExists(c), gc.Metrics{Metrics: m, Controller: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := testutil.GatherAndCount(reg, "kopgo_gc_deletions_total"); got != 1 || len(res.Deleted) != 2 {
		t.Fatalf("series %d, deleted %d", got, len(res.Deleted))
	}
	want := `
# HELP kopgo_gc_deletions_total Objects deleted by garbage collection.
# TYPE kopgo_gc_deletions_total counter
kopgo_gc_deletions_total{controller="web"} 2
`
	if err := testutil.GatherAndCompare(reg, stringsReader(want), "kopgo_gc_deletions_total"); err != nil {
		t.Error(err)
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

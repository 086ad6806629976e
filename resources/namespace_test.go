package resources_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopgo/kopgo/resources"
	"github.com/kopgo/kopgo/scope"
)

func TestEnsureNamespace(t *testing.T) {
	name := cluster.Namespace(t) + "-extra"
	c, tr := countedClient(t)
	t.Cleanup(func() {
		_ = cluster.Client().Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	for i, tt := range []struct {
		labels      map[string]string
		wantCreated bool
	}{
		{map[string]string{"team": "a"}, true},
		{map[string]string{"team": "b"}, false}, // left as it is
	} {
		created, err := resources.EnsureNamespace(t.Context(), c, name, tt.labels)
		if err != nil || created != tt.wantCreated {
			t.Errorf("call %d: EnsureNamespace = %t, %v; want %t, nil", i, created, err, tt.wantCreated)
		}
		if n := requests(tr); n != 1 {
			t.Errorf("call %d: %d requests, want 1", i, n)
		}
	}
	got, err := resources.Get[corev1.Namespace](t.Context(), c, scope.Cluster, name)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("a", got.Labels["team"]); diff != "" {
		t.Errorf("team label (-want +got):\n%s", diff)
	}

	if _, err := resources.EnsureNamespace(t.Context(), c, "Not_A_Name", nil); err == nil {
		t.Error("EnsureNamespace of an invalid name succeeded")
	}
}

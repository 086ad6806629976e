package watch_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/scope"
	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/watch"
)

// The API server goes away mid-stream and comes back; what changes after it
// returns is delivered, and the state built from the events equals the
// server's.
func TestEventsSurviveAPIServerRestart(t *testing.T) {
	kit, err := testkit.Start(t.Context(), testkit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kit.Stop)
	ns := kit.Namespace(t)
	c := kit.Client()
	ctx := t.Context()
	for i := range 20 {
		if err := c.Create(ctx, configMap(ns, fmt.Sprintf("cm-%02d", i), "0", nil)); err != nil {
			t.Fatal(err)
		}
	}
	events, err := watch.Events[*corev1.ConfigMap](ctx, watchClient(t, kit.Config), scope.Namespaced(ns))
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]string{}
	untilState(t, events, state, 10*time.Second, func(s map[string]string) bool { return len(s) == 20 })

	kit.StopAPIServer()
	time.Sleep(500 * time.Millisecond) // the watch notices and starts retrying
	if err := kit.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		name := fmt.Sprintf("cm-%02d", i)
		switch {
		case i < 10:
			cm := configMap(ns, name, "updated", nil)
			if err := c.Patch(ctx, cm, client.Merge); err != nil {
				t.Fatal(err)
			}
		case i < 15:
			if err := c.Delete(ctx, configMap(ns, name, "", nil)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 20; i < 25; i++ {
		if err := c.Create(ctx, configMap(ns, fmt.Sprintf("cm-%02d", i), "new", nil)); err != nil {
			t.Fatal(err)
		}
	}

	var list corev1.ConfigMapList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" {
			want[cm.Name] = cm.Data["v"]
		}
	}
	if len(want) != 20 {
		t.Fatalf("server has %d objects, want 20", len(want))
	}
	untilState(t, events, state, 60*time.Second, func(s map[string]string) bool {
		if len(s) != len(want) {
			return false
		}
		for k, v := range want {
			if s[k] != v {
				return false
			}
		}
		return true
	})
}

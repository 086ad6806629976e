package watch_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/scope"
	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/watch"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, testkit.Options{}, func(c *testkit.Cluster) { cluster = c })
}

func watchClient(t *testing.T, cfg *rest.Config) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func configMap(ns, name, value string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Data:       map[string]string{"v": value},
	}
}

// receive reads from ch until cond holds on the state built from events, or
// the timeout passes.
func untilState(t *testing.T, ch <-chan watch.Event[*corev1.ConfigMap], state map[string]string, timeout time.Duration, cond func(map[string]string) bool) {
	t.Helper()
	deadline := time.After(timeout)
	for !cond(state) {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatal("channel closed early")
			}
			switch ev.Type {
			case watch.Applied:
				state[ev.Object.Name] = ev.Object.Data["v"]
			case watch.Deleted:
				delete(state, ev.Object.Name)
			}
		case <-deadline:
			t.Fatalf("state not reached within %s; have %v", timeout, state)
		}
	}
}

func TestEventsFollowChanges(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	if err := c.Create(t.Context(), configMap(ns, "before", "0", nil)); err != nil {
		t.Fatal(err)
	}
	events, err := watch.Events[*corev1.ConfigMap](t.Context(), watchClient(t, cluster.Config), scope.Namespaced(ns))
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]string{}
	untilState(t, events, state, 10*time.Second, func(s map[string]string) bool { return s["before"] == "0" })

	a := configMap(ns, "a", "1", nil)
	if err := c.Create(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	a.Data["v"] = "2"
	if err := c.Update(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(t.Context(), configMap(ns, "before", "", nil)); err != nil {
		t.Fatal(err)
	}
	untilState(t, events, state, 10*time.Second, func(s map[string]string) bool {
		return cmp.Equal(s, map[string]string{"a": "2"})
	})
}

// controller-runtime's list options select on the server; the scope, not
// a client.InNamespace, says the namespace.
func TestSelectorsFilterOnServer(t *testing.T) {
	tests := []struct {
		name string
		opts []client.ListOption
	}{
		{"labels", []client.ListOption{client.MatchingLabels{"app": "web"}}},
		{"label selector", []client.ListOption{client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(labels.Set{"app": "web"})}}},
		{"fields", []client.ListOption{client.MatchingFields{"metadata.name": "web"}}},
		{"namespace option ignored", []client.ListOption{client.InNamespace("default"), client.MatchingLabels{"app": "web"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			c := cluster.Client()
			objects, err := watch.Objects[*corev1.ConfigMap](t.Context(), watchClient(t, cluster.Config), scope.Namespaced(ns), tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, cm := range []*corev1.ConfigMap{
				configMap(ns, "other", "x", map[string]string{"app": "db"}),
				configMap(ns, "web", "y", map[string]string{"app": "web"}),
			} {
				if err := c.Create(t.Context(), cm); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case got := <-objects:
				if got.Name != "web" || got.Namespace != ns {
					t.Fatalf("got %s/%s, want only %s/web", got.Namespace, got.Name, ns)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no object")
			}
			select {
			case got := <-objects:
				t.Fatalf("got %s as well", got.Name)
			case <-time.After(500 * time.Millisecond):
			}
		})
	}
}

func TestScopeMistakeIsInvalid(t *testing.T) {
	c := watchClient(t, cluster.Config)
	_, err := watch.Events[*corev1.Namespace](t.Context(), c, scope.Namespaced("default"))
	if koperrors.KindOf(err) != koperrors.Invalid {
		t.Errorf("Events[Namespace] in a namespace: %v, want Invalid", err)
	}
	_, err = watch.Signal[*corev1.ConfigMap](t.Context(), c, scope.Cluster)
	if koperrors.KindOf(err) != koperrors.Invalid {
		t.Errorf("Signal[ConfigMap] cluster-wide: %v, want Invalid", err)
	}
}

// A consumer that does not read while an object changes 200 times gets the
// latest state, once; nothing blocks the informer meanwhile.
func TestSlowConsumerGetsLatestState(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	ctx := t.Context()
	signals, err := watch.Signal[*corev1.ConfigMap](ctx, watchClient(t, cluster.Config), scope.Namespaced(ns))
	if err != nil {
		t.Fatal(err)
	}
	objects, err := watch.Objects[*corev1.ConfigMap](ctx, watchClient(t, cluster.Config), scope.Namespaced(ns))
	if err != nil {
		t.Fatal(err)
	}
	cm := configMap(ns, "busy", "0", nil)
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	const updates = 200
	for i := 1; i <= updates; i++ {
		cm.Data["v"] = fmt.Sprint(i)
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	// Read until the final state arrives: far fewer than 201 deliveries.
	received := 0
	for {
		select {
		case got := <-objects:
			received++
			if got.Data["v"] == fmt.Sprint(updates) {
				if received > updates/4 {
					t.Errorf("%d deliveries for %d updates: states did not coalesce", received, updates+1)
				}
				goto signals
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("final state not delivered after %d deliveries", received)
		}
	}
signals:
	// The signal watch is a separate informer and may still be catching up:
	// count what arrives for a second. Each read takes everything pending.
	n := 0
	for done := time.After(time.Second); ; {
		select {
		case <-signals:
			n++
			continue
		case <-done:
		}
		break
	}
	if n == 0 || n > updates/4 {
		t.Errorf("%d signals for %d changes, want at least one and far fewer than the changes", n, updates+1)
	}
}

func TestChannelsCloseWithoutLeaks(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ns := cluster.Namespace(t)
	c := watchClient(t, cluster.Config)
	ctx, cancel := context.WithCancel(t.Context())
	signals, err := watch.Signal[*corev1.ConfigMap](ctx, c, scope.Namespaced(ns))
	if err != nil {
		t.Fatal(err)
	}
	objects, err := watch.Objects[*corev1.ConfigMap](ctx, c, scope.AllNamespaces)
	if err != nil {
		t.Fatal(err)
	}
	events, err := watch.Events[*corev1.Namespace](ctx, c, scope.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let the informers list and watch
	cancel()
	for name, closed := range map[string]func() bool{
		"Signal":  func() bool { return drained(signals) },
		"Objects": func() bool { return drained(objects) },
		"Events":  func() bool { return drained(events) },
	} {
		if !closed() {
			t.Errorf("%s channel did not close after the context ended", name)
		}
	}
}

func drained[V any](ch <-chan V) bool {
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

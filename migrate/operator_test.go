package migrate_test

import (
	"context"
	"fmt"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/migrate"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit"
	widgetapi "github.com/kopgo/kopgo/test/widget"
)

// schemeAt is a scheme with client-go's kinds and the Widget type at
// version only: the same Go type served at the next version, as an
// operator's next release would read it (the two versions share their
// schema).
func schemeAt(version string) *runtime.Scheme {
	if version == widgetapi.GroupVersion.Version {
		return widgetapi.Scheme()
	}
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	gv := schema.GroupVersion{Group: widgetapi.GroupVersion.Group, Version: version}
	s.AddKnownTypes(gv, &widgetapi.Widget{}, &widgetapi.WidgetList{})
	metav1.AddToGroupVersion(s, gv)
	return s
}

// operatorAt runs a kopgo operator that reads Widgets at version and
// applies one ConfigMap per Widget, until the returned stop is called. It
// counts the calls of its reconciler.
func operatorAt(t *testing.T, name, version string, calls *atomic.Int64) (stop func()) {
	t.Helper()
	s := schemeAt(version)
	r := reconciler.Func[*widgetapi.Widget](func(ctx context.Context, w *widgetapi.Widget, env *reconciler.Env) (reconciler.Action, error) {
		calls.Add(1)
		cm := corev1ac.ConfigMap(w.Name, w.Namespace).WithData(map[string]string{"size": fmt.Sprint(w.Spec.Size)})
		_, err := env.Applier.Apply(ctx, cm)
		return reconciler.Done(), err
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	b := kopcontroller.New[*widgetapi.Widget](name, r).Config(cluster.Config).Scheme(s).
		FieldOwner("widget-operator").Recorder(&observability.FakeRecorder{})
	go func() { done <- b.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("operator %s: %v", name, err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// childVersions are the resourceVersions of the ConfigMaps in ns.
func childVersions(ctx context.Context, c client.Client, ns string) (map[string]string, error) {
	list := &corev1.ConfigMapList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" {
			out[cm.Name] = cm.ResourceVersion
		}
	}
	return out, nil
}

// An operator's CRD upgraded under it writes no child: a kopgo operator
// (vN, reading Widgets at v1) keeps one ConfigMap per Widget; v2 becomes
// the storage version and every Widget is migrated (rewritten at v2);
// the operator's next release (reading at v2) replaces it; v1 stops being
// served, the Widgets are migrated again and v1 is dropped. The
// migration's writes change no generation, label or annotation, so the
// loop runs none of the reconciler's code for them, and the restarted
// operator's first reconcile of each Widget proves its ConfigMap
// unchanged: not one ConfigMap is written by the upgrade.
func TestUpgradeUnderAnOperatorWritesNoChild(t *testing.T) {
	const n = 100
	ns := cluster.Namespace(t)
	ctx := t.Context()
	c, err := client.New(cluster.Config, client.Options{Scheme: schemeAt("v1")})
	if err != nil {
		t.Fatal(err)
	}
	u := &testkit.Upgrade{Cluster: cluster, CRD: widgetapi.CRD(), To: "v2"}
	if err := u.Install(ctx); err != nil {
		t.Fatal(err)
	}
	var callsV1, callsV2 atomic.Int64
	stopV1 := operatorAt(t, "widgets-v1", "v1", &callsV1)
	for i := range n {
		w := &widgetapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: widgetName(i)}, Spec: widgetapi.WidgetSpec{Size: int64(i)}}
		if err := c.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	var before map[string]string
	testkit.Eventually(t, 60*time.Second, "every Widget Ready with its ConfigMap", func(ctx context.Context) error {
		list := &widgetapi.WidgetList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		for i := range list.Items {
			if !status.IsTrue(&list.Items[i], status.Ready) {
				return fmt.Errorf("%s not Ready", list.Items[i].Name)
			}
		}
		if before, err = childVersions(ctx, c, ns); err != nil {
			return err
		}
		if len(list.Items) != n || len(before) != n {
			return fmt.Errorf("%d Widgets, %d ConfigMaps", len(list.Items), len(before))
		}
		return nil
	})
	settle := func() { time.Sleep(2 * time.Second) } // the events of the last writes are handled within it
	settle()
	calls0 := callsV1.Load()

	if err := u.AddStorageVersion(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := migrate.Run(ctx, cluster.Client(), u.CRD.Name, migrate.Options{Method: migrate.Write})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first migration: %s", rep)
	if rep.Rewritten != n {
		t.Errorf("first migration rewrote %d Widgets, want %d", rep.Rewritten, n)
	}
	settle()
	if d := callsV1.Load() - calls0; d != 0 {
		t.Errorf("the migration's rewrites ran the reconciler %d times, want 0", d)
	}

	// The next release reads at v2.
	stopV1()
	operatorAt(t, "widgets-v2", "v2", &callsV2)
	testkit.Eventually(t, 60*time.Second, "the v2 operator reconciled every Widget", func(context.Context) error {
		if got := callsV2.Load(); got < n {
			return fmt.Errorf("%d reconciles", got)
		}
		return nil
	})
	if err := u.Unserve(ctx); err != nil {
		t.Fatal(err)
	}
	if rep, err = migrate.Run(ctx, cluster.Client(), u.CRD.Name, migrate.Options{Method: migrate.Write}); err != nil {
		t.Fatal(err)
	}
	t.Logf("second migration: %s", rep)
	if err := u.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	settle()
	after, err := childVersions(ctx, c, ns)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(before, after) {
		changed := 0
		for k, v := range after {
			if before[k] != v {
				changed++
			}
		}
		t.Errorf("%d of %d ConfigMaps written during the upgrade (%d before, %d after), want 0", changed, n, len(before), len(after))
	}
	t.Logf("%d Widgets: reconciles by the v1 operator during the migration 0 (%d in all), by the v2 operator %d (one each after its start); ConfigMaps written by the upgrade: 0",
		n, callsV1.Load(), callsV2.Load())
}

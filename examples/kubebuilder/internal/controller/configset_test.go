package controller_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kubebuilderv1 "github.com/kopgo/kopgo/examples/kubebuilder/api/v1"
	"github.com/kopgo/kopgo/examples/kubebuilder/internal/controller"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

// A bare control plane on purpose: without kube-controller-manager's garbage
// collector, a ConfigMap that disappears was deleted by the controller.
func TestMain(m *testing.M) {
	if fuzzWorker() {
		// A worker of `go test -fuzz` runs only the fuzz target: no cluster.
		os.Exit(m.Run())
	}
	ctrl.SetLogger(logr.Discard()) // each manager logs to its test
	opts := testkit.Options{Scheme: newScheme(), CRDPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")}}
	testkit.Main(m, opts, func(c *testkit.Cluster) { cluster = c })
}

// fuzzWorker reports whether this process is a worker of `go test -fuzz`,
// which runs nothing but the fuzz target (the process that starts the
// workers runs the tests, with the cluster, first).
func fuzzWorker() bool {
	flag.Parse()
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(kubebuilderv1.AddToScheme(s))
	return s
}

// The whole life of a ConfigSet, as its user sees it, with the controller
// running as a user that has only the permissions of the ClusterRole
// generated from the +kubebuilder:rbac markers.
func TestConfigSet(t *testing.T) {
	ns := cluster.Namespace(t)
	perms, rules := startManager(t, ns, nil)
	defer func() {
		// Every rule was needed, and nothing was refused.
		if denied := perms.Denied(); len(denied) > 0 {
			t.Errorf("refused requests (missing RBAC rules): %v", denied)
		}
		if unused := perms.Unused(rules,
			testkit.BlockOwnerDeletion(kubebuilderv1.GroupVersion.Group, "configsets"),
			testkit.PatchEvents); len(unused) > 0 {
			t.Errorf("RBAC rules never used (excess permissions): %v; used: %v", unused, perms.Used())
		}
	}()
	c := cluster.Client()
	ctx := t.Context()

	cs := &kubebuilderv1.ConfigSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		Spec: kubebuilderv1.ConfigSetSpec{Configs: []kubebuilderv1.ConfigEntry{
			{Name: "web", Data: map[string]string{"mode": "fast"}},
			{Name: "db", Data: map[string]string{"pool": "10"}},
		}},
	}
	if err := c.Create(ctx, cs); err != nil {
		t.Fatal(err)
	}
	// A ConfigMap with the ConfigSet's label that the ConfigSet does not
	// control: pruning must leave it alone.
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-other",
		Labels: map[string]string{controller.ConfigSetLabel: "app"}}}
	if err := c.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}

	t.Log("one ConfigMap per entry, controlled by the ConfigSet")
	wantRef := &metav1.OwnerReference{APIVersion: kubebuilderv1.GroupVersion.String(), Kind: "ConfigSet", Name: "app",
		UID: cs.UID, Controller: new(true), BlockOwnerDeletion: new(true)}
	eventually(t, func() error {
		return configMapsAre(ctx, ns, map[string]map[string]string{
			"app-web": {"mode": "fast"}, "app-db": {"pool": "10"},
		}, wantRef)
	})
	waitReady(t, cs, 2)
	if !slices.Contains(cs.Finalizers, controller.Finalizer) {
		t.Errorf("finalizers %v, want %s", cs.Finalizers, controller.Finalizer)
	}

	t.Log("an entry removed from the spec loses its ConfigMap; a changed entry is updated")
	cs.Spec.Configs = []kubebuilderv1.ConfigEntry{{Name: "web", Data: map[string]string{"mode": "safe"}}}
	if err := c.Update(ctx, cs); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		return configMapsAre(ctx, ns, map[string]map[string]string{"app-web": {"mode": "safe"}}, wantRef)
	})
	waitReady(t, cs, 1)
	if err := c.Get(ctx, client.ObjectKeyFromObject(foreign), foreign); err != nil {
		t.Errorf("ConfigMap not controlled by the ConfigSet: %v", err)
	}

	t.Log("once settled, the controller writes nothing")
	settled := cs.ResourceVersion
	var web corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-web"}, &web); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if err := c.Get(ctx, client.ObjectKeyFromObject(cs), cs); err != nil {
		t.Fatal(err)
	}
	rv := web.ResourceVersion
	if err := c.Get(ctx, client.ObjectKeyFromObject(&web), &web); err != nil {
		t.Fatal(err)
	}
	if cs.ResourceVersion != settled || web.ResourceVersion != rv {
		t.Errorf("resourceVersions moved: ConfigSet %s -> %s, ConfigMap %s -> %s", settled, cs.ResourceVersion, rv, web.ResourceVersion)
	}

	t.Log("deletion runs the finalizer, which removes only its own")
	const other = "example.com/other"
	cs.Finalizers = append(cs.Finalizers, other)
	if err := c.Update(ctx, cs); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, cs); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cs), cs); err != nil {
			return err
		}
		if diff := cmp.Diff([]string{other}, cs.Finalizers); diff != "" {
			return fmt.Errorf("finalizers (-want +got):\n%s", diff)
		}
		return nil
	})
	cs.Finalizers = nil
	if err := c.Update(ctx, cs); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cs), cs); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ConfigSet still there (err %w)", err)
		}
		return nil
	})

	t.Log("events tell what happened")
	eventually(t, func() error {
		var events eventsv1.EventList
		if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return err
		}
		var got []string
		for _, e := range events.Items {
			if e.Regarding.Kind == "ConfigSet" && e.Regarding.Name == "app" {
				got = append(got, e.Reason+": "+e.Note)
			}
		}
		slices.Sort(got)
		want := []string{
			"Created: Created ConfigMap app-db",
			"Created: Created ConfigMap app-web",
			"Finalized: Cleaned up ConfigSet app",
			"Pruned: Deleted ConfigMap app-db",
			"Updated: Updated ConfigMap app-web",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("events (-want +got):\n%s", diff)
		}
		return nil
	})
}

// A ConfigSet whose name cannot be a label value can never be reconciled:
// it is Stalled, for its generation, with the reason.
func TestConfigSetNameTooLong(t *testing.T) {
	ns := cluster.Namespace(t)
	_, _ = startManager(t, ns, nil)
	c := cluster.Client()

	cs := &kubebuilderv1.ConfigSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: strings.Repeat("x", 64)},
		Spec:       kubebuilderv1.ConfigSetSpec{Configs: []kubebuilderv1.ConfigEntry{{Name: "web"}}},
	}
	if err := c.Create(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(cs), cs); err != nil {
			return err
		}
		stalled := status.Get(conds(cs), status.Stalled)
		if !status.IsTrue(conds(cs), status.Stalled) || stalled.Reason != "Invalid" || cs.Status.ObservedGeneration != cs.Generation {
			return fmt.Errorf("status %+v, want Stalled=True with reason Invalid at generation %d", cs.Status, cs.Generation)
		}
		return nil
	})
	if status.IsTrue(conds(cs), status.Ready) {
		t.Errorf("Ready, want not Ready: %+v", cs.Status.Conditions)
	}
	var cms corev1.ConfigMapList
	if err := c.List(t.Context(), &cms, client.InNamespace(ns), client.HasLabels{controller.ConfigSetLabel}); err != nil {
		t.Fatal(err)
	}
	if len(cms.Items) != 0 {
		t.Errorf("%d ConfigMaps, want none", len(cms.Items))
	}
	// Clean up: the namespace's deletion would wait on the finalizer.
	if err := c.Delete(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(cs), cs); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ConfigSet still there (err %w)", err)
		}
		return nil
	})
}

// startManager runs the controller in a manager for namespace ns until the
// test ends. The manager authenticates as a user bound to the ClusterRole
// in config/rbac, so a missing +kubebuilder:rbac marker fails the test.
// It returns the permissions the manager's requests needed and the rules
// it was given. A non-nil traffic counts the requests about each ConfigSet.
func startManager(t *testing.T, ns string, traffic *objectTraffic) (*testkit.Permissions, []rbacv1.PolicyRule) {
	t.Helper()
	userCfg, rules := managerConfig(t)
	cfg, perms := testkit.RecordPermissions(userCfg)
	if traffic != nil {
		cfg.Wrap(traffic.wrap)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     newScheme(),
		Logger:     testr.New(t), // the controller's logs, shown when the test fails
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller: config.Controller{SkipNameValidation: new(true)}, // one controller per test, same name
	})
	if err != nil {
		t.Fatal(err)
	}
	// As cmd/main.go and suite_test.go construct it: SetupWithManager adds
	// kopgo's helpers.
	err = (&controller.ConfigSetReconciler{
		Client: mgr.GetClient(),
		Scheme: mgr.GetScheme(),
	}).SetupWithManager(mgr)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return perms, rules
}

// managerConfig returns the client configuration of user
// "configset-manager", bound to the generated ClusterRole.
func managerConfig(t *testing.T) (*rest.Config, []rbacv1.PolicyRule) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := clientgoscheme.Codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	role, ok := obj.(*rbacv1.ClusterRole)
	if !ok {
		t.Fatalf("role.yaml holds a %T, want a ClusterRole", obj)
	}
	const user = "configset-manager"
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := cluster.Client().Create(t.Context(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	cfg, err := cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, role.Rules
}

// configMapsAre checks that the ConfigMaps controlled by ref in ns are
// exactly want (name to data).
func configMapsAre(ctx context.Context, ns string, want map[string]map[string]string, ref *metav1.OwnerReference) error {
	var cms corev1.ConfigMapList
	if err := cluster.Client().List(ctx, &cms, client.InNamespace(ns)); err != nil {
		return err
	}
	got := map[string]map[string]string{}
	for _, cm := range cms.Items {
		owner := metav1.GetControllerOf(&cm)
		if owner == nil {
			continue
		}
		if diff := cmp.Diff(ref, owner); diff != "" {
			return fmt.Errorf("ConfigMap %s: controller reference (-want +got):\n%s", cm.Name, diff)
		}
		if cm.Labels[controller.ConfigSetLabel] != ref.Name {
			return fmt.Errorf("ConfigMap %s: labels %v, want %s=%s", cm.Name, cm.Labels, controller.ConfigSetLabel, ref.Name)
		}
		got[cm.Name] = cm.Data
	}
	if diff := cmp.Diff(want, got); diff != "" {
		return fmt.Errorf("ConfigMaps (-want +got):\n%s", diff)
	}
	return nil
}

// waitReady waits until cs is Ready for its current generation with n
// ConfigMaps, and leaves the object as read in cs.
func waitReady(t *testing.T, cs *kubebuilderv1.ConfigSet, n int32) {
	t.Helper()
	eventually(t, func() error {
		if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(cs), cs); err != nil {
			return err
		}
		if !status.IsTrue(conds(cs), status.Ready) || cs.Status.ConfigMaps != n || cs.Status.ObservedGeneration != cs.Generation {
			return fmt.Errorf("status %+v, want Ready with %d ConfigMaps at generation %d", cs.Status, n, cs.Generation)
		}
		return nil
	})
}

// eventually retries check for up to 30 seconds and fails the test with
// its last error.
func eventually(t *testing.T, check func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// conds gives kopgo's status package the conditions of cs, whose type has
// no condition methods.
func conds(cs *kubebuilderv1.ConfigSet) status.Getter {
	return status.Access(cs, &cs.Status.Conditions)
}

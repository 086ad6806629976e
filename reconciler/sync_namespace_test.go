package reconciler_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kopgo/kopgo/apply"
	"github.com/kopgo/kopgo/internal/loop"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// tenantChildren are a Tenant's desired children: its Namespace, and a
// RoleBinding granting edit to its owner and a ResourceQuota in it.
func tenantChildren(t *widget.Tenant, pods string) []client.Object {
	ns := t.Spec.Namespace
	return []client.Object{
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-edit"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: t.Spec.Owner}},
		},
		&corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-quota"},
			Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse(pods)}},
		},
		// Last on purpose: Sync must not write the others before it.
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
	}
}

// tenantHarness runs Sync for the cluster-scoped Tenant through kopgo's
// loop on a manager of its own.
type tenantHarness struct {
	t       *testing.T
	cached  client.Reader // the manager's cache
	adapter *loop.Loop[*widget.Tenant]
	pods    string // the quota's desired pods
}

func newTenantHarness(t *testing.T) *tenantHarness {
	t.Helper()
	installTenantCRD(t)
	scheme := runtime.NewScheme()
	utilruntime.Must(widget.AddToScheme(scheme))
	utilruntime.Must(widget.AddTenantToScheme(scheme))
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, rbacv1.AddToScheme} {
		utilruntime.Must(add(scheme))
	}
	mgr, err := manager.New(cluster.Config, manager.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	if !mgr.GetCache().WaitForCacheSync(t.Context()) {
		t.Fatal("cache did not sync")
	}
	h := &tenantHarness{t: t, pods: "10", cached: mgr.GetClient()}
	env := envFromManager(t, mgr, "tenant-sync", nil)
	m, err := observability.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	r := reconciler.Sync([]client.Object{&corev1.Namespace{}, &rbacv1.RoleBinding{}, &corev1.ResourceQuota{}},
		func(_ context.Context, tn *widget.Tenant, _ reconciler.Children) ([]client.Object, reconciler.Action, error) {
			return tenantChildren(tn, h.pods), reconciler.Done(), nil
		})
	if h.adapter, err = loop.New[*widget.Tenant]("tenant-sync", env, r, loop.Options{Metrics: m}); err != nil {
		t.Fatal(err)
	}
	return h
}

// installTenantCRD installs the Tenant CRD for the test and removes it
// afterwards.
func installTenantCRD(t *testing.T) {
	t.Helper()
	c := cluster.Client()
	crd := widget.TenantCRD()
	if err := c.Create(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Delete it and wait until it is gone, so that the next test can
		// install it afresh.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Delete(ctx, crd); client.IgnoreNotFound(err) != nil {
			t.Errorf("delete CRD: %v", err)
			return
		}
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(crd), &apiextensionsv1.CustomResourceDefinition{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		if err != nil {
			t.Errorf("CRD %s not gone: %v", crd.Name, err)
		}
	})
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			return false, err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("Tenant CRD not established: %v", err)
	}
}

// newTenant creates a Tenant (with a client that knows the type) and
// deletes it after the test.
func newTenant(t *testing.T, c client.Client, name, ns string) *widget.Tenant {
	t.Helper()
	tn := &widget.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: widget.TenantSpec{Namespace: ns, Owner: "alice"}}
	if err := c.Create(t.Context(), tn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), tn); client.IgnoreNotFound(err) != nil {
			t.Errorf("delete Tenant %s: %v", name, err)
		}
	})
	return tn
}

// settle waits until the manager's cache holds the server's version of
// each object, so that the loop sees what the server has.
func (h *tenantHarness) settle(c client.Client, objs ...client.Object) {
	h.t.Helper()
	err := wait.PollUntilContextTimeout(h.t.Context(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, o := range objs {
			live, cached := o.DeepCopyObject().(client.Object), o.DeepCopyObject().(client.Object)
			if err := c.Get(ctx, client.ObjectKeyFromObject(o), live); err != nil {
				return false, err
			}
			if err := h.cached.Get(ctx, client.ObjectKeyFromObject(o), cached); err != nil || cached.GetResourceVersion() != live.GetResourceVersion() {
				return false, nil //nolint:nilerr // not in the cache yet: poll again
			}
		}
		return true, nil
	})
	if err != nil {
		h.t.Fatalf("cache did not catch up: %v", err)
	}
}

func (h *tenantHarness) reconcile(tn *widget.Tenant) error {
	h.t.Helper()
	_, err := wake(h.t, h.adapter, client.ObjectKeyFromObject(tn))
	return err
}

// written returns the kinds of the Tenant's namespaced children found in
// ns, with their resourceVersions.
func written(t *testing.T, c client.Client, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for kind, obj := range map[string]client.Object{
		"RoleBinding":   &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-edit"}},
		"ResourceQuota": &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-quota"}},
	} {
		err := c.Get(t.Context(), client.ObjectKeyFromObject(obj), obj)
		switch {
		case err == nil:
			out[kind] = obj.GetResourceVersion()
		case !apierrors.IsNotFound(err):
			t.Fatal(err)
		}
	}
	return out
}

// A cluster-scoped Tenant whose desired children are a Namespace and a
// RoleBinding and a ResourceQuota in it writes nothing into that namespace
// when it is someone else's: Sync refuses the Namespace (Stalled, naming
// the holder; the error's chain holds an *apply.TakeoverError) and holds
// back every child in it, saying so. The same whether the namespace has
// another controller or none.
func TestSyncNeverWritesIntoANamespaceItDoesNotOwn(t *testing.T) {
	h := newTenantHarness(t)
	c, err := client.New(cluster.Config, client.Options{Scheme: func() *runtime.Scheme {
		s := widget.Scheme()
		utilruntime.Must(widget.AddTenantToScheme(s))
		return s
	}()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		holder bool // the namespace is controlled by another Tenant
		says   string
	}{
		{"orphan namespace", false, "the object of that name has no controller"},
		{"namespace of another tenant", true, "the object of that name is controlled by Tenant holder-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := cluster.Namespace(t) // someone else's: the test's
			if tc.holder {
				holder := newTenant(t, c, "holder-"+ns, ns)
				var nsObj corev1.Namespace
				if err := c.Get(t.Context(), client.ObjectKey{Name: ns}, &nsObj); err != nil {
					t.Fatal(err)
				}
				if err := controllerutil.SetControllerReference(holder, &nsObj, c.Scheme()); err != nil {
					t.Fatal(err)
				}
				if err := c.Update(t.Context(), &nsObj); err != nil {
					t.Fatal(err)
				}
			}
			tn := newTenant(t, c, "tenant-"+ns, ns)
			h.settle(c, tn, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})

			err := h.reconcile(tn)
			if _, ok := errors.AsType[*apply.TakeoverError](err); !ok {
				t.Errorf("Reconcile = %v, want an error holding an *apply.TakeoverError", err)
			}
			if diff := cmp.Diff(map[string]string{}, written(t, c, ns)); diff != "" {
				t.Errorf("children written into namespace %s, which is not the Tenant's (-want +got):\n%s", ns, diff)
			}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(tn), tn); err != nil {
				t.Fatal(err)
			}
			stalled := status.Get(tn, status.Stalled)
			if stalled == nil || stalled.Status != metav1.ConditionTrue {
				t.Fatalf("Stalled = %v, want True", stalled)
			}
			for _, s := range []string{
				"desired child Namespace " + ns + ": " + tc.says,
				"desired children RoleBinding " + ns + "/tenant-edit, ResourceQuota " + ns + "/tenant-quota not written: they are in namespace " + ns +
					", which is not this Tenant's",
			} {
				if !strings.Contains(stalled.Message, s) {
					t.Errorf("Stalled message %q does not say %q", stalled.Message, s)
				}
			}
		})
	}
}

// A Tenant's children are not written into its namespace while that
// namespace is being deleted: the change to the quota waits until the
// Namespace is created anew, and the Tenant shows Reconciling, not Stalled.
func TestSyncDoesNotWriteIntoANamespaceBeingDeleted(t *testing.T) {
	h := newTenantHarness(t)
	c, err := client.New(cluster.Config, client.Options{Scheme: func() *runtime.Scheme {
		s := widget.Scheme()
		utilruntime.Must(widget.AddTenantToScheme(s))
		return s
	}()})
	if err != nil {
		t.Fatal(err)
	}
	ns := "tenant-deleting-" + strings.TrimPrefix(cluster.Namespace(t), "testsyncdoesnotwriteintoanamespacebeingdeleted-")
	tn := newTenant(t, c, "tenant-"+ns, ns)
	h.settle(c, tn)
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	t.Cleanup(func() {
		// No namespace controller runs here: it stays Terminating, as
		// the testkit's own namespaces do.
		if err := c.Delete(context.Background(), nsObj); client.IgnoreNotFound(err) != nil {
			t.Errorf("delete namespace %s: %v", ns, err)
		}
	})
	if err := h.reconcile(tn); err != nil {
		t.Fatalf("first Reconcile: %v", err)
	}
	before := written(t, c, ns)
	if len(before) != 2 {
		t.Fatalf("after the first reconcile the namespace holds %v, want the RoleBinding and the ResourceQuota", before)
	}
	if err := c.Delete(t.Context(), nsObj); err != nil {
		t.Fatal(err)
	}
	// Wait until the manager's cache sees the deletion: Sync reads it.
	err = wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := h.reconcile(tn); err != nil {
			return false, err
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(tn), tn); err != nil {
			return false, err
		}
		r := status.Get(tn, status.Reconciling)
		return r != nil && strings.Contains(r.Message, "is being deleted"), nil
	})
	if err != nil {
		t.Fatalf("the Tenant did not wait for its namespace's deletion: %v; conditions %v", err, tn.Status.Conditions)
	}

	h.pods = "20" // a change Sync would write into the quota
	if err := h.reconcile(tn); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if diff := cmp.Diff(before, written(t, c, ns)); diff != "" {
		t.Errorf("children written into namespace %s while it is being deleted (-want +got resourceVersions):\n%s", ns, diff)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(tn), tn); err != nil {
		t.Fatal(err)
	}
	if s := status.Get(tn, status.Stalled); s != nil {
		t.Errorf("Stalled = %v, want none: the namespace's deletion is waited for", s)
	}
}

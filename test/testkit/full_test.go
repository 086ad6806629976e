package testkit_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/test/testkit"
)

// eventually polls cond every 100ms until it returns nil or timeout passes,
// then fails the test with the last error.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	testkit.Eventually(t, timeout, what, cond)
}

func deployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
}

func TestDeploymentBecomesAvailableOnKwokNodes(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	d := deployment(ns, "web", 3)
	if err := c.Create(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "Deployment Available with 3 ready replicas", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return err
		}
		for _, cond := range d.Status.Conditions {
			if cond.Type == appsv1.DeploymentAvailable && cond.Status == corev1.ConditionTrue && d.Status.ReadyReplicas == 3 {
				return nil
			}
		}
		return errorf("status %+v", d.Status)
	})

	var pods corev1.PodList
	if err := c.List(t.Context(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s: node %q phase %s, want scheduled and Running", p.Name, p.Spec.NodeName, p.Status.Phase)
		}
	}
}

func TestOwnerDeletionCascades(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}}
	if err := c.Create(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	child := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: "child",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}},
	}}
	if err := c.Create(t.Context(), child); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "child garbage-collected", func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKeyFromObject(child), &corev1.Secret{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errorf("child still there (get error %v)", err)
	})
}

// The ClusterRole aggregation controller runs: an aggregated ClusterRole
// gets the rules of the ClusterRoles its selector matches, and the built-in
// "edit" role has rules, so binding it needs them (or "bind"), as in
// production.
func TestClusterRolesAggregate(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	label := "kopgo.test/aggregate-to-" + ns
	aggregated := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-aggregated"},
		AggregationRule: &rbacv1.AggregationRule{
			ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{label: "true"}}},
		},
	}
	part := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-part", Labels: map[string]string{label: "true"}},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Verbs: []string{"get", "list"}},
		},
	}
	for _, o := range []client.Object{aggregated, part} {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), o) })
	}
	eventually(t, 30*time.Second, "aggregated ClusterRole has the labelled role's rules", func(ctx context.Context) error {
		var got rbacv1.ClusterRole
		if err := c.Get(ctx, client.ObjectKeyFromObject(aggregated), &got); err != nil {
			return err
		}
		if diff := cmp.Diff(part.Rules, got.Rules); diff != "" {
			return errorf("rules (-want +got):\n%s", diff)
		}
		return nil
	})

	// A user who may create RoleBindings, and nothing else, cannot bind
	// "edit": it would grant what the user does not hold.
	binder := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "binder"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"rolebindings"}, Verbs: []string{"create"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "binder"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: binder.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "binder"}},
	}
	for _, o := range []client.Object{binder, binding} {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := cluster.UserConfig("binder")
	if err != nil {
		t.Fatal(err)
	}
	user, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	bindEdit := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "someone"}},
	}
	if err := user.Create(t.Context(), bindEdit); !apierrors.IsForbidden(err) {
		t.Errorf("binding edit without bind or edit's rules: got %v, want Forbidden", err)
	}
}

// The resource-quota controller runs: a ResourceQuota's status.used counts
// what the namespace holds, and follows a new object.
func TestResourceQuotaStatusUpdates(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "q"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/configmaps": resource.MustParse("10")}},
	}
	if err := c.Create(t.Context(), quota); err != nil {
		t.Fatal(err)
	}
	usedIs := func(want int) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(quota), quota); err != nil {
				return err
			}
			used, ok := quota.Status.Used["count/configmaps"]
			if !ok || used.Value() != int64(want) {
				return errorf("status %+v, want %d ConfigMaps used", quota.Status, want)
			}
			return nil
		}
	}
	var cms corev1.ConfigMapList
	if err := c.List(t.Context(), &cms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "quota status counts the namespace's ConfigMaps", usedIs(len(cms.Items)))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "counted"}}
	if err := c.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "quota status counts the new ConfigMap", usedIs(len(cms.Items)+1))
}

// The Service range has room for hundreds of Services with cluster IPs (a
// /24 ran out after 254).
func TestServiceRangeHoldsHundredsOfServices(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	const n = 300
	errs := make(chan error, n)
	names := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range names {
				svc := &corev1.Service{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("svc-%d", i)},
					Spec: corev1.ServiceSpec{
						Selector: map[string]string{"app": "web"},
						Ports:    []corev1.ServicePort{{Port: 80}},
					},
				}
				if err := c.Create(t.Context(), svc); err != nil {
					errs <- fmt.Errorf("create Service %s: %w", svc.Name, err)
					continue
				}
				if net.ParseIP(svc.Spec.ClusterIP) == nil {
					errs <- fmt.Errorf("Service %s has cluster IP %q", svc.Name, svc.Spec.ClusterIP)
				}
			}
		})
	}
	for i := range n {
		names <- i
	}
	close(names)
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if failed++; failed <= 3 {
			t.Error(err)
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d Services failed", failed, n)
	}
}

package demo

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/examples/webapp"
)

// OperatorNamespace is where the operator keeps its lease and registry.
const OperatorNamespace = "webapp-system"

// MetricsReader is the service account in [OperatorNamespace] allowed to
// read the operator's /metrics, as Prometheus would be.
const MetricsReader = "webapp-metrics-reader"

// Install creates the operator's namespace and its ClusterRole and Role from
// config/rbac, bound to user, and the [MetricsReader] service account with
// permission to GET /metrics: what a cluster administrator does once before
// the operator runs as that user. The CRD is installed separately (the
// testkit installs it at start). Objects that exist are left as they are.
func Install(ctx context.Context, c client.Client, user string) error {
	cr, role, err := webapp.RBAC()
	if err != nil {
		return err
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: OperatorNamespace}},
		cr,
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: cr.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cr.Name},
			Subjects:   subject,
		},
		role,
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: role.Namespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects:   subject,
		},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: OperatorNamespace, Name: MetricsReader}},
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: MetricsReader},
			Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: MetricsReader},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: MetricsReader},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: OperatorNamespace, Name: MetricsReader}},
		},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("install %T %s: %w", o, client.ObjectKeyFromObject(o), err)
		}
	}
	return nil
}

// MetricsToken returns a short-lived token of the [MetricsReader] service
// account, for scraping the operator's /metrics ([Operator.Reconciles]).
func MetricsToken(ctx context.Context, c client.Client) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: OperatorNamespace, Name: MetricsReader}}
	tr := &authenticationv1.TokenRequest{}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		return "", fmt.Errorf("token of service account %s/%s: %w", OperatorNamespace, MetricsReader, err)
	}
	return tr.Status.Token, nil
}

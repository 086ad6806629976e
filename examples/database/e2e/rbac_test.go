package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/examples/database/api/v1alpha1"
	"github.com/kopgo/kopgo/test/testkit"
)

// operatorUser is the user the suite's operator runs as, bound only to the
// generated ClusterRole and Role of config/rbac.
const operatorUser = "database-operator-e2e"

// perms records the permissions the operator's requests needed.
var perms *testkit.Permissions

// installRBAC creates the ClusterRole and the Role of config/rbac/role.yaml,
// bound to user, as a cluster administrator does before the operator runs.
// The Role's namespace must exist.
func installRBAC(ctx context.Context, c client.Client, user string) error {
	cr, role, err := generatedRBAC()
	if err != nil {
		return err
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	for _, o := range []client.Object{
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
	} {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("install %T %s: %w", o, client.ObjectKeyFromObject(o), err)
		}
	}
	return nil
}

// generatedRBAC reads the ClusterRole and the Role that `make generate`
// wrote from the operator's +kubebuilder:rbac markers.
func generatedRBAC() (*rbacv1.ClusterRole, *rbacv1.Role, error) {
	const path = "../config/rbac/role.yaml"
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var cr *rbacv1.ClusterRole
	var role *rbacv1.Role
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var doc rbacv1.ClusterRole // a Role has the same fields
		if err := d.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		switch doc.Kind {
		case "ClusterRole":
			cr = &doc
		case "Role":
			role = &rbacv1.Role{TypeMeta: doc.TypeMeta, ObjectMeta: doc.ObjectMeta, Rules: doc.Rules}
		}
	}
	if cr == nil || role == nil {
		return nil, nil, fmt.Errorf("%s: want a ClusterRole and a Role", path)
	}
	return cr, role, nil
}

// checkPermissions fails t if the API server refused any request of the
// operator so far: a rule missing from the generated RBAC.
func checkPermissions(t *testing.T) {
	t.Helper()
	if denied := perms.Denied(); len(denied) > 0 {
		t.Errorf("the API server refused the operator (missing RBAC rules):\n  %s", strings.Join(denied, "\n  "))
	}
}

// The generated RBAC is minimal: after the whole suite, every rule was
// needed by a request of the operator, but those no request of this suite
// can show (the suite runs the operator without leader election and
// without a metrics endpoint; see the allowed list). The operator runs as
// a user bound to nothing else, so a missing rule fails the test that
// needed it (checkPermissions).
func TestGeneratedRBACIsMinimal(t *testing.T) {
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() != "" {
		t.Skip("the rules' use is known only after the whole suite")
	}
	checkPermissions(t)
	cr, role, err := generatedRBAC()
	if err != nil {
		t.Fatal(err)
	}
	unused := perms.Unused(slices.Concat(cr.Rules, role.Rules),
		// Checked by admission when a child's controller reference
		// blocks its owner's deletion, never requested.
		testkit.BlockOwnerDeletion(v1alpha1.GroupVersion.Group, "databases"),
		// Sent only when an event repeats.
		testkit.PatchEvents,
		// Sent only when a Database is deleted while its first reconcile
		// runs (kopgo's loop then reads it live): a race that
		// TestDeletedAtOnceLeavesNoEntry provokes, and which leaks a
		// registry entry without this rule, but not on every run.
		testkit.Permission{Group: v1alpha1.GroupVersion.Group, Resource: "databases", Verb: "get"},
		// Sent only for a read of a child the cache cannot answer (see
		// the operator's RBAC in operator.go): under Run, whose caches of
		// the child kinds are complete, Sync creates children without
		// one, and the Applier needs one only when the cache fails or
		// does not show a child it applied for another owner.
		testkit.Permission{Group: "", Resource: "secrets", Verb: "get"},
		testkit.Permission{Group: "", Resource: "services", Verb: "get"},
		testkit.Permission{Group: "apps", Resource: "statefulsets", Verb: "get"},
		testkit.Permission{Group: "batch", Resource: "jobs", Verb: "get"},
		// The metrics endpoint, off here.
		testkit.MetricsTokenReview, testkit.MetricsAccessReview,
		// Leader election, off here: its lease renewals are writes that
		// would blur the quiet window's count.
		testkit.Permission{Group: "coordination.k8s.io", Resource: "leases", Verb: "get"},
		testkit.Permission{Group: "coordination.k8s.io", Resource: "leases", Verb: "create"},
		testkit.Permission{Group: "coordination.k8s.io", Resource: "leases", Verb: "update"},
		testkit.Permission{Group: "", Resource: "events", Verb: "create"},
	)
	if len(unused) > 0 {
		t.Errorf("RBAC rules the operator never used (excess permissions): %v\nused: %v", unused, perms.Used())
	}
}

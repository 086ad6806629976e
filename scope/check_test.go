package scope_test

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/scope"
)

// checkCases are shared by the static-mapper test and the API server test.
var checkCases = []struct {
	name    string
	scope   scope.Scope
	gvk     schema.GroupVersionKind
	wantErr string
}{
	{"namespaced kind, namespaced scope", scope.Namespaced("web"), deployment, ""},
	{"namespaced kind, all namespaces", scope.AllNamespaces, deployment, ""},
	{"namespaced kind, no version", scope.Namespaced("web"), deployment.GroupKind().WithVersion(""), ""},
	{"namespaced kind, cluster scope", scope.Cluster, deployment,
		"scope Cluster given for namespaced kind apps/v1, Kind=Deployment: use scope.Namespaced(ns) or scope.AllNamespaces"},
	{"cluster kind, cluster scope", scope.Cluster, clusterRole, ""},
	{"core cluster kind, cluster scope", scope.Cluster, namespace, ""},
	{"cluster kind, namespaced scope", scope.Namespaced("default"), clusterRole,
		`scope Namespaced("default") given for cluster-scoped kind rbac.authorization.k8s.io/v1, Kind=ClusterRole: use scope.Cluster`},
	{"cluster kind, all namespaces", scope.AllNamespaces, namespace,
		"scope AllNamespaces given for cluster-scoped kind /v1, Kind=Namespace: use scope.Cluster"},
	{"empty namespace", scope.Namespaced(""), deployment,
		`scope Namespaced("") is invalid: name a namespace, or use scope.AllNamespaces for every namespace`},
	{"unset scope", scope.Scope{}, clusterRole,
		"scope is unset: use scope.Namespaced(ns), scope.Cluster or scope.AllNamespaces"},
	{"no kind", scope.Cluster, schema.GroupVersionKind{Version: "v1"},
		"check scope Cluster: no kind given (/v1, Kind=)"},
	{"unknown kind", scope.Namespaced("web"), widget,
		`check scope Namespaced("web") for kind example.com/v1, Kind=Widget: no matches for kind "Widget" in version "example.com/v1"`},
}

func TestCheck(t *testing.T) {
	runCheckCases(t, staticMapper())
}

func runCheckCases(t *testing.T, mapper apimeta.RESTMapper) {
	t.Helper()
	for _, tt := range checkCases {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.scope.Check(mapper, tt.gvk)
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Fatalf("Check() error (-want +got):\n%s", diff)
			}
			if err != nil && koperrors.KindOf(err) != koperrors.Invalid {
				t.Errorf("Check() error kind = %s, want Invalid", koperrors.KindOf(err))
			}
		})
	}
	t.Run("unknown kind wraps NoKindMatchError", func(t *testing.T) {
		err := scope.Namespaced("web").Check(mapper, widget)
		var noKind *apimeta.NoKindMatchError
		if !errors.As(err, &noKind) {
			t.Fatalf("Check() = %v, want it to wrap a *NoKindMatchError", err)
		}
		if diff := cmp.Diff(widget.GroupKind(), noKind.GroupKind); diff != "" {
			t.Errorf("NoKindMatchError.GroupKind (-want +got):\n%s", diff)
		}
		if !apimeta.IsNoMatchError(err) {
			t.Errorf("apimeta.IsNoMatchError(%v) = false", err)
		}
	})
}

// failingMapper fails every lookup with err, as a dynamic mapper does when
// discovery fails.
type failingMapper struct {
	apimeta.RESTMapper
	err error
}

func (m failingMapper) RESTMapping(schema.GroupKind, ...string) (*apimeta.RESTMapping, error) {
	return nil, m.err
}

// A mapper error that is not "unknown kind" keeps its own Kind: a discovery
// request that failed is worth retrying, an Invalid error is not.
func TestCheckMapperFailure(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	err := scope.Namespaced("web").Check(failingMapper{err: fmt.Errorf("discovery: %w", refused)}, deployment)
	want := `check scope Namespaced("web") for kind apps/v1, Kind=Deployment: discovery: dial tcp: connection refused`
	if diff := cmp.Diff(want, errString(err)); diff != "" {
		t.Errorf("Check() error (-want +got):\n%s", diff)
	}
	if got := koperrors.KindOf(err); got != koperrors.Unavailable {
		t.Errorf("Check() error kind = %s, want Unavailable", got)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Check() = %v, want it to wrap ECONNREFUSED", err)
	}
}

func TestCheckObject(t *testing.T) {
	unstructuredDeployment := &unstructured.Unstructured{}
	unstructuredDeployment.SetGroupVersionKind(deployment)
	partialClusterRole := &metav1.PartialObjectMetadata{}
	partialClusterRole.SetGroupVersionKind(clusterRole)
	unstructuredDeployments := &unstructured.UnstructuredList{}
	unstructuredDeployments.SetGroupVersionKind(deployment.GroupVersion().WithKind("DeploymentList"))

	tests := []struct {
		name    string
		scope   scope.Scope
		obj     runtime.Object
		scheme  *runtime.Scheme
		wantErr string
		prefix  bool // wantErr is the start of the message, the scheme's error goes on
	}{
		{"typed", scope.Namespaced("web"), &appsv1.Deployment{}, clientgoscheme.Scheme, "", false},
		{"typed, wrong scope", scope.Cluster, &appsv1.Deployment{}, clientgoscheme.Scheme,
			"scope Cluster given for namespaced kind apps/v1, Kind=Deployment: use scope.Namespaced(ns) or scope.AllNamespaces", false},
		{"typed cluster kind", scope.Cluster, &corev1.Namespace{}, clientgoscheme.Scheme, "", false},
		{"typed list", scope.AllNamespaces, &appsv1.DeploymentList{}, clientgoscheme.Scheme, "", false},
		{"typed list, wrong scope", scope.AllNamespaces, &rbacv1.ClusterRoleList{}, clientgoscheme.Scheme,
			"scope AllNamespaces given for cluster-scoped kind rbac.authorization.k8s.io/v1, Kind=ClusterRole: use scope.Cluster", false},
		{"unstructured", scope.Namespaced("web"), unstructuredDeployment, clientgoscheme.Scheme, "", false},
		{"unstructured list", scope.Cluster, unstructuredDeployments, clientgoscheme.Scheme,
			"scope Cluster given for namespaced kind apps/v1, Kind=Deployment: use scope.Namespaced(ns) or scope.AllNamespaces", false},
		{"partial metadata", scope.Namespaced("web"), partialClusterRole, clientgoscheme.Scheme,
			`scope Namespaced("web") given for cluster-scoped kind rbac.authorization.k8s.io/v1, Kind=ClusterRole: use scope.Cluster`, false},
		{"not in scheme", scope.Namespaced("web"), &appsv1.Deployment{}, runtime.NewScheme(),
			`check scope Namespaced("web"): cannot tell the kind of *v1.Deployment: no kind is registered for the type v1.Deployment in scheme`, true},
		{"unstructured without kind", scope.Cluster, &unstructured.Unstructured{}, clientgoscheme.Scheme,
			"check scope Cluster: cannot tell the kind of *unstructured.Unstructured: Object 'Kind' is missing in", true},
		{"invalid scope first", scope.Namespaced(""), &appsv1.Deployment{}, runtime.NewScheme(),
			`scope Namespaced("") is invalid: name a namespace, or use scope.AllNamespaces for every namespace`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.scope.CheckObject(staticMapper(), tt.obj, tt.scheme)
			got := errString(err)
			if tt.prefix {
				got = got[:min(len(got), len(tt.wantErr))]
			}
			if diff := cmp.Diff(tt.wantErr, got); diff != "" {
				t.Fatalf("CheckObject() error (-want +got):\n%s", diff)
			}
			if err != nil && koperrors.KindOf(err) != koperrors.Invalid {
				t.Errorf("CheckObject() error kind = %s, want Invalid", koperrors.KindOf(err))
			}
		})
	}
}

package scope_test

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

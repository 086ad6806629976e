package scope_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/scope"
)

var (
	deployment  = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	clusterRole = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	namespace   = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	widget      = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
)

func staticMapper() apimeta.RESTMapper {
	m := apimeta.NewDefaultRESTMapper(nil)
	m.Add(deployment, apimeta.RESTScopeNamespace)
	m.Add(clusterRole, apimeta.RESTScopeRoot)
	m.Add(namespace, apimeta.RESTScopeRoot)
	return m
}

// checkCases are shared by the static-mapper test and the real API server test.
var checkCases = []struct {
	name    string
	scope   scope.Scope
	gvk     schema.GroupVersionKind
	wantErr string // substring; "" means no error
}{
	{"namespaced kind, namespaced scope", scope.Namespaced("web"), deployment, ""},
	{"namespaced kind, all namespaces", scope.AllNamespaces, deployment, ""},
	{"namespaced kind, cluster scope", scope.Cluster, deployment, "scope Cluster given for namespaced kind apps/v1, Kind=Deployment: use scope.Namespaced(ns) or scope.AllNamespaces"},
	{"cluster kind, cluster scope", scope.Cluster, clusterRole, ""},
	{"cluster kind, namespaced scope", scope.Namespaced("default"), clusterRole, `scope Namespaced("default") given for cluster-scoped kind rbac.authorization.k8s.io/v1, Kind=ClusterRole: use scope.Cluster`},
	{"cluster kind, all namespaces", scope.AllNamespaces, namespace, "scope AllNamespaces given for cluster-scoped kind /v1, Kind=Namespace: use scope.Cluster"},
	{"empty namespace", scope.Namespaced(""), deployment, `scope Namespaced("") has no namespace`},
	{"unset scope", scope.Scope{}, deployment, "scope is unset"},
	{"unknown kind", scope.Namespaced("web"), widget, "example.com/v1, Kind=Widget"},
}

func TestCheck(t *testing.T) {
	runCheckCases(t, staticMapper())
}

func runCheckCases(t *testing.T, mapper apimeta.RESTMapper) {
	t.Helper()
	for _, tt := range checkCases {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.scope.Check(mapper, tt.gvk)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Check() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Check() = %v, want an error containing %q", err, tt.wantErr)
			}
			if !koperrors.IsInvalid(err) {
				t.Errorf("Check() error kind = %s, want Invalid", koperrors.KindOf(err))
			}
		})
	}
}

func TestCheckUnknownKindWrapsNoMatch(t *testing.T) {
	err := scope.Namespaced("web").Check(staticMapper(), widget)
	if !apimeta.IsNoMatchError(err) {
		t.Errorf("Check() = %v, want it to wrap a NoKindMatchError", err)
	}
}

func TestAccessorsAndString(t *testing.T) {
	tests := []struct {
		scope      scope.Scope
		ns         string
		namespaced bool
		str        string
	}{
		{scope.Namespaced("a"), "a", true, `Namespaced("a")`},
		{scope.AllNamespaces, "", true, "AllNamespaces"},
		{scope.Cluster, "", false, "Cluster"},
		{scope.Scope{}, "", false, "unset scope"},
	}
	for _, tt := range tests {
		t.Run(tt.str, func(t *testing.T) {
			if got := tt.scope.Namespace(); got != tt.ns {
				t.Errorf("Namespace() = %q, want %q", got, tt.ns)
			}
			if got := tt.scope.IsNamespaced(); got != tt.namespaced {
				t.Errorf("IsNamespaced() = %t, want %t", got, tt.namespaced)
			}
			if got := tt.scope.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
		})
	}
	seen := map[scope.Scope]int{}
	for _, s := range []scope.Scope{scope.Namespaced("a"), scope.Namespaced("a"), scope.Namespaced("b"), scope.Cluster} {
		seen[s]++
	}
	if seen[scope.Namespaced("a")] != 2 || len(seen) != 3 {
		t.Errorf("scopes do not compare by value: %v", seen)
	}
	if !(scope.Scope{}).IsZero() || scope.Cluster.IsZero() {
		t.Error("IsZero is wrong")
	}
}

func TestListOptions(t *testing.T) {
	tests := []struct {
		scope scope.Scope
		want  string
	}{
		{scope.Namespaced("a"), "a"},
		{scope.AllNamespaces, ""},
		{scope.Cluster, ""},
	}
	for _, tt := range tests {
		t.Run(tt.scope.String(), func(t *testing.T) {
			var lo client.ListOptions
			lo.ApplyOptions(tt.scope.ListOptions())
			if lo.Namespace != tt.want {
				t.Errorf("namespace = %q, want %q", lo.Namespace, tt.want)
			}
		})
	}
}

func TestApplyTo(t *testing.T) {
	tests := []struct {
		name    string
		scope   scope.Scope
		have    string
		wantNS  string
		wantErr string
	}{
		{"sets namespace", scope.Namespaced("a"), "", "a", ""},
		{"same namespace", scope.Namespaced("a"), "a", "a", ""},
		{"different namespace", scope.Namespaced("a"), "b", "b", `metadata.namespace is "b" but the scope is Namespaced("a")`},
		{"cluster on bare object", scope.Cluster, "", "", ""},
		{"cluster on namespaced object", scope.Cluster, "b", "b", `metadata.namespace is "b" but the scope is Cluster`},
		{"all namespaces", scope.AllNamespaces, "", "", "cannot place an object"},
		{"empty namespace", scope.Namespaced(""), "", "", "has no namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: tt.have}}
			err := tt.scope.ApplyTo(cm)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("ApplyTo() = %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("ApplyTo() = %v, want error containing %q", err, tt.wantErr)
			case tt.wantErr != "" && !koperrors.IsInvalid(err):
				t.Errorf("ApplyTo() error kind = %s, want Invalid", koperrors.KindOf(err))
			}
			if cm.Namespace != tt.wantNS {
				t.Errorf("namespace after ApplyTo = %q, want %q (never overwritten)", cm.Namespace, tt.wantNS)
			}
		})
	}
}

func TestOf(t *testing.T) {
	if got := scope.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "x"}}); got != scope.Namespaced("x") {
		t.Errorf("Of(namespaced object) = %s", got)
	}
	if got := scope.Of(&corev1.Namespace{}); got != scope.Cluster {
		t.Errorf("Of(cluster object) = %s", got)
	}
}

package scope_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/scope"
)

func TestListOptions(t *testing.T) {
	tests := []struct {
		scope scope.Scope
		want  client.ListOptions
	}{
		{scope.Namespaced("a"), client.ListOptions{Namespace: "a"}},
		{scope.AllNamespaces, client.ListOptions{}},
		{scope.Cluster, client.ListOptions{}},
	}
	for _, tt := range tests {
		t.Run(tt.scope.String(), func(t *testing.T) {
			var got client.ListOptions
			got.ApplyOptions(tt.scope.ListOptions())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("list options (-want +got):\n%s", diff)
			}
		})
	}
	// Options given after the scope's still win, as with any list options.
	var got client.ListOptions
	got.ApplyOptions(append(scope.Namespaced("a").ListOptions(), client.MatchingLabels{"app": "web"}))
	if got.Namespace != "a" || got.LabelSelector.String() != "app=web" {
		t.Errorf("list options = namespace %q, selector %q; want a, app=web", got.Namespace, got.LabelSelector)
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
		{"different namespace", scope.Namespaced("a"), "b", "b",
			`metadata.namespace is "b" but the scope is Namespaced("a")`},
		{"cluster on bare object", scope.Cluster, "", "", ""},
		{"cluster on object with a namespace", scope.Cluster, "b", "b",
			`metadata.namespace is "b" but the kind is cluster-scoped (scope Cluster)`},
		{"all namespaces", scope.AllNamespaces, "", "",
			"scope AllNamespaces cannot place an object: an object of a namespaced kind must name its namespace"},
		{"empty namespace", scope.Namespaced(""), "", "",
			`scope Namespaced("") is invalid: name a namespace, or use scope.AllNamespaces for every namespace`},
		{"unset", scope.Scope{}, "b", "b",
			"scope is unset: use scope.Namespaced(ns), scope.Cluster or scope.AllNamespaces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: tt.have}}
			err := tt.scope.ApplyTo(cm)
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("ApplyTo() error (-want +got):\n%s", diff)
			}
			if err != nil && koperrors.KindOf(err) != koperrors.Invalid {
				t.Errorf("ApplyTo() error kind = %s, want Invalid", koperrors.KindOf(err))
			}
			if cm.Namespace != tt.wantNS {
				t.Errorf("namespace after ApplyTo = %q, want %q", cm.Namespace, tt.wantNS)
			}
		})
	}
}

func TestOf(t *testing.T) {
	tests := []struct {
		name      string
		gvk       schema.GroupVersionKind
		namespace string
		want      scope.Scope
		wantErr   string
	}{
		{"namespaced kind", deployment, "x", scope.Namespaced("x"), ""},
		{"namespaced kind, no namespace", deployment, "", scope.AllNamespaces, ""},
		{"cluster kind", clusterRole, "", scope.Cluster, ""},
		{"cluster kind, a namespace is not looked at", namespace, "x", scope.Cluster, ""},
		{"unknown kind", widget, "x", scope.Scope{}, "scope of kind example.com/v1, Kind=Widget: no matches for kind"},
		{"no kind", schema.GroupVersionKind{}, "x", scope.Scope{}, "scope of /, Kind=: no kind given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := scope.Of(staticMapper(), tt.gvk, tt.namespace)
			if got != tt.want || !strings.HasPrefix(errString(err), tt.wantErr) || (err == nil) != (tt.wantErr == "") {
				t.Errorf("Of() = %s, %v; want %s, %q", got, err, tt.want, tt.wantErr)
			}
			if err != nil && koperrors.KindOf(err) != koperrors.Invalid {
				t.Errorf("Of() error kind = %s, want Invalid", koperrors.KindOf(err))
			}
		})
	}
	if _, err := scope.Of(staticMapper(), widget, ""); !apimeta.IsNoMatchError(err) {
		t.Errorf("Of() of an unknown kind = %v, want a NoKindMatchError", err)
	}
}

package scope_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
			`set scope ConfigMap b/cm: metadata.namespace is "b" but the scope is Namespaced("a")`},
		{"cluster on bare object", scope.Cluster, "", "", ""},
		{"cluster on object with a namespace", scope.Cluster, "b", "b",
			`set scope ConfigMap b/cm: metadata.namespace is "b" but the scope is Cluster`},
		{"all namespaces", scope.AllNamespaces, "", "",
			"set scope ConfigMap cm: scope AllNamespaces cannot place an object: use scope.Namespaced(ns)"},
		{"empty namespace", scope.Namespaced(""), "", "",
			`set scope ConfigMap cm: scope Namespaced("") is invalid: name a namespace, or use scope.AllNamespaces for every namespace`},
		{"unset", scope.Scope{}, "b", "b",
			"set scope ConfigMap b/cm: scope is unset: use scope.Namespaced(ns), scope.Cluster or scope.AllNamespaces"},
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
		name string
		obj  client.Object
		want scope.Scope
	}{
		{"namespaced object", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "cm"}}, scope.Namespaced("x")},
		{"cluster object", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, scope.Cluster},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scope.Of(tt.obj); got != tt.want {
				t.Errorf("Of() = %s, want %s", got, tt.want)
			}
		})
	}
}

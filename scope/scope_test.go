package scope_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/scope"
)

func TestAccessors(t *testing.T) {
	type view struct {
		Namespace string
		IsZero    bool
		String    string
	}
	tests := []struct {
		scope scope.Scope
		want  view
	}{
		{scope.Namespaced("a"), view{Namespace: "a", String: `Namespaced("a")`}},
		{scope.Namespaced(""), view{String: `Namespaced("")`}},
		{scope.AllNamespaces, view{String: "AllNamespaces"}},
		{scope.Cluster, view{String: "Cluster"}},
		{scope.Scope{}, view{IsZero: true, String: "Scope{}"}},
	}
	for _, tt := range tests {
		t.Run(tt.want.String, func(t *testing.T) {
			got := view{tt.scope.Namespace(), tt.scope.IsZero(), tt.scope.String()}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("accessors (-want +got):\n%s", diff)
			}
		})
	}
}

// Scopes compare by value, so they work with == and as map keys.
func TestComparable(t *testing.T) {
	got := map[scope.Scope]int{}
	for _, s := range []scope.Scope{
		scope.Namespaced("a"), scope.Namespaced("a"), scope.Namespaced("b"),
		scope.Cluster, scope.AllNamespaces, scope.AllNamespaces, {},
	} {
		got[s]++
	}
	want := map[scope.Scope]int{
		scope.Namespaced("a"): 2, scope.Namespaced("b"): 1,
		scope.Cluster: 1, scope.AllNamespaces: 2, {}: 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scope counts (-want +got):\n%s", diff)
	}
	if scope.Namespaced("") == scope.AllNamespaces || scope.Namespaced("") == (scope.Scope{}) || scope.Cluster == (scope.Scope{}) {
		t.Error(`Namespaced(""), AllNamespaces, Cluster and Scope{} must all differ`)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		scope   scope.Scope
		wantErr string
		prefix  bool // wantErr is the start of apimachinery's long message
	}{
		{"namespaced", scope.Namespaced("team-a"), "", false},
		{"cluster", scope.Cluster, "", false},
		{"all namespaces", scope.AllNamespaces, "", false},
		{"unset", scope.Scope{}, "scope is unset: use scope.Namespaced(ns), scope.Cluster or scope.AllNamespaces", false},
		{"empty namespace", scope.Namespaced(""), `scope Namespaced("") is invalid: name a namespace, or use scope.AllNamespaces for every namespace`, false},
		{"dots", scope.Namespaced("team.a"), `scope Namespaced("team.a") is invalid: not a namespace name: must not contain dots`, false},
		{"too long", scope.Namespaced(strings.Repeat("a", 64)), `scope Namespaced("` + strings.Repeat("a", 64) + `") is invalid: not a namespace name: must be no more than 63 characters`, false},
		{"upper case", scope.Namespaced("Team"), `scope Namespaced("Team") is invalid: not a namespace name: a lowercase RFC 1123 label must consist of`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.scope.Validate()
			got := errString(err)
			if tt.prefix {
				got = got[:min(len(got), len(tt.wantErr))]
			}
			if diff := cmp.Diff(tt.wantErr, got); diff != "" {
				t.Fatalf("Validate() error (-want +got):\n%s", diff)
			}
			if err != nil && koperrors.KindOf(err) != koperrors.Invalid {
				t.Errorf("Validate() error kind = %s, want Invalid", koperrors.KindOf(err))
			}
		})
	}
}

package owners_test

import (
	"context"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/owners"
	"github.com/kopgo/kopgo/scope"
)

const ownerLabel = "example.com/webapp"

func req(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

func labelled(ns, value string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"}}
	if value != "" {
		s.Labels = map[string]string{ownerLabel: value, "other": "x"}
	}
	return s
}

func TestLabelMapper(t *testing.T) {
	tests := []struct {
		name   string
		mapper handler.MapFunc
		obj    client.Object
		want   []reconcile.Request
	}{
		{"same namespace", owners.LabelMapper(ownerLabel), labelled("shop", "web"), []reconcile.Request{req("shop", "web")}},
		{"no label", owners.LabelMapper(ownerLabel), labelled("shop", ""), nil},
		{"other labels only", owners.LabelMapper("example.com/other"), labelled("shop", "web"), nil},
		{"owners in one namespace", owners.LabelMapper(ownerLabel, owners.OwnerScope(scope.Namespaced("ops"))),
			labelled("shop", "web"), []reconcile.Request{req("ops", "web")}},
		{"cluster-scoped owners", owners.LabelMapper(ownerLabel, owners.OwnerScope(scope.Cluster)),
			labelled("shop", "tenant-a"), []reconcile.Request{req("", "tenant-a")}},
		{"AllNamespaces: the object's namespace", owners.LabelMapper(ownerLabel, owners.OwnerScope(scope.AllNamespaces)),
			labelled("shop", "web"), []reconcile.Request{req("shop", "web")}},
		{"cluster-scoped watched object", owners.LabelMapper(ownerLabel),
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{ownerLabel: "t"}}}, []reconcile.Request{req("", "t")}},
		{"invalid key maps nothing", owners.LabelMapper("not a key"), labelled("shop", "web"), nil},
		{"invalid scope maps nothing", owners.LabelMapper(ownerLabel, owners.OwnerScope(scope.Namespaced(""))), labelled("shop", "web"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.mapper(t.Context(), tt.obj)); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReferenceMapper(t *testing.T) {
	webapp := schema.GroupKind{Group: "example.com", Kind: "WebApp"}
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cm", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "example.com/v1", Kind: "WebApp", Name: "controller", UID: "1", Controller: new(true)},
		{APIVersion: "example.com/v2", Kind: "WebApp", Name: "plain-owner", UID: "2"},
		{APIVersion: "example.com/v1", Kind: "WebApp", Name: "not-controller", UID: "3", Controller: new(false)},
		{APIVersion: "apps/v1", Kind: "WebApp", Name: "other-group", UID: "4"},
		{APIVersion: "example.com/v1", Kind: "Other", Name: "other-kind", UID: "5"},
		{APIVersion: "example.com/v2", Kind: "WebApp", Name: "plain-owner", UID: "6"},
	}}}
	all := []reconcile.Request{req("shop", "controller"), req("shop", "plain-owner"), req("shop", "not-controller")}
	tests := []struct {
		name string
		opts []owners.Option
		want []reconcile.Request
	}{
		{"all owners of the kind, any version, once each", nil, all},
		{"controller only", []owners.Option{owners.ControllerOnly(true)}, []reconcile.Request{req("shop", "controller")}},
		{"cluster-scoped owner kind", []owners.Option{owners.ControllerOnly(true), owners.OwnerScope(scope.Cluster)},
			[]reconcile.Request{req("", "controller")}},
		{"namespaced scope: still the object's namespace", []owners.Option{owners.ControllerOnly(true), owners.OwnerScope(scope.Namespaced("elsewhere"))},
			[]reconcile.Request{req("shop", "controller")}},
		{"the zero scope is the default", []owners.Option{owners.OwnerScope(scope.Scope{})}, all},
		{"invalid scope maps nothing", []owners.Option{owners.OwnerScope(scope.Namespaced(""))}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, owners.ReferenceMapper(webapp, tt.opts...)(t.Context(), obj)); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
	if got := owners.ReferenceMapper(webapp)(t.Context(), &corev1.ConfigMap{}); got != nil {
		t.Errorf("object without owners maps to %v", got)
	}
}

// The mappers fit controller-runtime's typed handler through a one-line
// wrapper, as the documentation shows.
func TestTypedWatchWrapsMapper(t *testing.T) {
	m := owners.LabelMapper(ownerLabel)
	typed := func(ctx context.Context, s *corev1.Secret) []reconcile.Request { return m(ctx, s) }
	_ = handler.TypedEnqueueRequestsFromMapFunc(typed)
	if diff := cmp.Diff([]reconcile.Request{req("shop", "web")}, typed(t.Context(), labelled("shop", "web"))); diff != "" {
		t.Errorf("typed label mapper (-want +got):\n%s", diff)
	}
}

// A mapper made from a mistake says so in the log, once.
func TestBrokenMapperLogsOnce(t *testing.T) {
	var lines []string
	logger := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})
	ctx := log.IntoContext(t.Context(), logger)
	m := owners.LabelMapper(ownerLabel, owners.OwnerScope(scope.Namespaced("")))
	m(ctx, labelled("shop", "web"))
	m(ctx, labelled("shop", "api"))
	if len(lines) != 1 || !strings.Contains(lines[0], `Namespaced(\"\") is invalid`) {
		t.Errorf("log lines %q, want one naming the bad scope", lines)
	}
}

func TestOwnerLabels(t *testing.T) {
	long := strings.Repeat("a", 64)
	tests := []struct {
		name    string
		key     string
		owner   client.Object
		wantErr string
	}{
		{name: "ok", key: ownerLabel, owner: deploy("shop", "web.v2", "u")},
		{name: "bad key", key: "a b", owner: deploy("shop", "web", "u"), wantErr: `set owner label Secret shop/s: owner label key "a b": name part must consist of`},
		{name: "name too long for a label", key: ownerLabel, owner: deploy("shop", long, "u"),
			wantErr: "set owner label Secret shop/s: owner Deployment shop/" + long + " cannot be named in label example.com/webapp: must be no more than 63 bytes"},
		{name: "no name", key: ownerLabel, owner: deploy("shop", "", "u"), wantErr: "set owner label Secret shop/s: owner Deployment shop/ has no name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			child := labelled("shop", "")
			child.Labels = map[string]string{"keep": "me"}
			before := child.DeepCopy()
			err := owners.SetOwnerLabel(child, tt.key, tt.owner)
			if tt.wantErr != "" {
				if err == nil || koperrors.KindOf(err) != koperrors.Invalid || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error %v\nwant Invalid: %s...", err, tt.wantErr)
				}
				if diff := cmp.Diff(before, child); diff != "" {
					t.Errorf("child changed on error (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(map[string]string{"keep": "me", tt.key: tt.owner.GetName()}, child.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			// The mapper follows the label back to the owner.
			if diff := cmp.Diff([]reconcile.Request{req("shop", tt.owner.GetName())}, owners.LabelMapper(tt.key)(t.Context(), child)); diff != "" {
				t.Errorf("round trip through LabelMapper (-want +got):\n%s", diff)
			}
		})
	}
}

package owners_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/owners"
)

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	return s
}()

func deploy(ns, name string, uid types.UID) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid}}
}

func TestSetControllerAndOwner(t *testing.T) {
	tests := []struct {
		name    string
		owner   client.Object
		obj     client.Object
		ctrl    bool
		wantErr string
	}{
		{"same namespace", deploy("a", "web", "1"), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "c"}}, true, ""},
		{"cluster owner of namespaced", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r", UID: "2"}}, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "c"}}, false, ""},
		{"cluster owner of cluster", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r", UID: "2"}}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, true, ""},
		{"cross namespace", deploy("a", "web", "1"), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "c"}}, true,
			`owner Deployment a/web is in namespace "a" and cannot own an object in "b"`},
		{"namespaced owner of cluster object", deploy("a", "web", "1"), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, false,
			"namespaced owner Deployment a/web cannot own cluster-scoped Namespace n"},
		{"owner not created", deploy("a", "web", ""), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "c"}}, true,
			"owner has no UID"},
		{"second controller", deploy("a", "web", "1"), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "c",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "9", Controller: new(true)}}}}, true,
			`already controlled by StatefulSet "db"; Deployment "web" cannot be a second controller`},
		{"unknown owner type", &struct{ corev1.ConfigMap }{ConfigMap: corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "x", UID: "3"}}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "c"}}, false, "no kind is registered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.obj.DeepCopyObject().(client.Object)
			var err error
			if tt.ctrl {
				err = owners.SetController(tt.owner, tt.obj, scheme)
			} else {
				err = owners.SetOwner(tt.owner, tt.obj, scheme)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !koperrors.IsInvalid(err) {
					t.Fatalf("error %v, want Invalid containing %q", err, tt.wantErr)
				}
				if diff := cmp.Diff(before, tt.obj); diff != "" {
					t.Errorf("object changed on error (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			refs := tt.obj.GetOwnerReferences()
			last := refs[len(refs)-1]
			if last.UID != tt.owner.GetUID() || last.Name != tt.owner.GetName() || (last.Controller != nil && *last.Controller) != tt.ctrl {
				t.Errorf("owner reference %+v", last)
			}
			// Idempotent: setting again replaces, never duplicates.
			_ = owners.SetOwner(tt.owner, tt.obj, scheme)
			if got := len(tt.obj.GetOwnerReferences()); got != len(refs) {
				t.Errorf("%d references after setting twice, want %d", got, len(refs))
			}
		})
	}
}

func TestApplyConfigurationMatchesReference(t *testing.T) {
	o := deploy("a", "web", "1")
	ref, err := owners.Reference(o, scheme, true)
	if err != nil {
		t.Fatal(err)
	}
	ac, err := owners.ApplyConfiguration(o, scheme, true)
	if err != nil {
		t.Fatal(err)
	}
	got := metav1.OwnerReference{APIVersion: *ac.APIVersion, Kind: *ac.Kind, Name: *ac.Name, UID: *ac.UID, Controller: ac.Controller, BlockOwnerDeletion: ac.BlockOwnerDeletion}
	if diff := cmp.Diff(ref, got); diff != "" {
		t.Errorf("apply form differs (-typed +apply):\n%s", diff)
	}
}

func TestMappers(t *testing.T) {
	webGK := schema.GroupKind{Group: "example.com", Kind: "WebApp"}
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "example.com/v1", Kind: "WebApp", Name: "controller", UID: "1", Controller: new(true)},
		{APIVersion: "example.com/v2", Kind: "WebApp", Name: "plain-owner", UID: "2"},
		{APIVersion: "apps/v1", Kind: "Deployment", Name: "other-kind", UID: "3"},
	}}}
	req := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	ctx := context.Background()
	if diff := cmp.Diff([]reconcile.Request{req("controller"), req("plain-owner")}, owners.ReferenceMapper(webGK, false)(ctx, obj)); diff != "" {
		t.Errorf("ReferenceMapper (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]reconcile.Request{req("controller")}, owners.ReferenceMapper(webGK, true)(ctx, obj)); diff != "" {
		t.Errorf("ReferenceMapper controller-only (-want +got):\n%s", diff)
	}
	mapper := owners.LabelMapper("example.com/webapp")
	if got := mapper(ctx, obj); got != nil {
		t.Errorf("unlabelled object maps to %v", got)
	}
	owners.SetOwnerLabel(obj, "example.com/webapp", deploy("ns", "shop", "9"))
	if diff := cmp.Diff([]reconcile.Request{req("shop")}, mapper(ctx, obj)); diff != "" {
		t.Errorf("LabelMapper (-want +got):\n%s", diff)
	}
}

func TestRefSet(t *testing.T) {
	a := owners.ObjectRef{Kind: "ConfigMap", Namespace: "ns", Name: "a"}
	b := owners.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "ns", Name: "b"}
	c := owners.ObjectRef{Kind: "Namespace", Name: "c"}
	s := owners.NewRefSet(a, b, a)
	if s.Len() != 2 || !s.Has(a) || s.Has(c) {
		t.Fatalf("set %v", s.Sorted())
	}
	if diff := cmp.Diff([]owners.ObjectRef{a, c}, s.Union(owners.NewRefSet(c)).Difference(owners.NewRefSet(b)).Sorted()); diff != "" {
		t.Errorf("union/difference (-want +got):\n%s", diff)
	}
	s.Delete(a)
	if s.Has(a) || s.Len() != 1 {
		t.Errorf("delete failed: %v", s.Sorted())
	}
	if got := []string{a.String(), b.String(), c.String()}; !cmp.Equal(got, []string{"ConfigMap ns/a", "Deployment.apps ns/b", "Namespace c"}) {
		t.Errorf("String() = %v", got)
	}
	ref, err := owners.RefOf(deploy("ns", "b", "1"), scheme)
	if err != nil || ref != b {
		t.Errorf("RefOf = %v, %v, want %v", ref, err, b)
	}
}

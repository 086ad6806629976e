package owners_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/owners"
)

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

func deploy(ns, name string, uid types.UID) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid}}
}

func configMap(ns, name string, refs ...metav1.OwnerReference) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: refs}}
}

// notRegistered is a type the scheme does not know.
type notRegistered struct{ corev1.ConfigMap }

func TestSetOwnerAndController(t *testing.T) {
	web := deploy("shop", "web", "u-web")
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "reader", UID: "u-role"}}
	webRef := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "u-web"}
	webCtrl := webRef
	webCtrl.Controller, webCtrl.BlockOwnerDeletion = new(true), new(true)
	dbCtrl := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "u-db", Controller: new(true)}
	roleRef := metav1.OwnerReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "reader", UID: "u-role"}
	oldWeb := webCtrl
	oldWeb.APIVersion, oldWeb.UID = "apps/v1beta1", "u-old-web"
	unregistered := &notRegistered{ConfigMap: *configMap("shop", "x")}
	unregistered.UID = "u-x"

	tests := []struct {
		name       string
		owner, obj client.Object
		controller bool
		opts       []owners.Option
		want       []metav1.OwnerReference // the object's references after
		wantErr    string                  // the message's start; Kind Invalid
	}{
		{name: "controller in the same namespace", owner: web, obj: configMap("shop", "cfg"), controller: true,
			want: []metav1.OwnerReference{webCtrl}},
		{name: "owner in the same namespace", owner: web, obj: configMap("shop", "cfg"),
			want: []metav1.OwnerReference{webRef}},
		{name: "controller without blockOwnerDeletion", owner: web, obj: configMap("shop", "cfg"), controller: true,
			opts: []owners.Option{owners.BlockOwnerDeletion(false)},
			want: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "u-web", Controller: new(true), BlockOwnerDeletion: new(false)}}},
		{name: "cluster-scoped owner of a namespaced object", owner: role, obj: configMap("shop", "cfg"),
			want: []metav1.OwnerReference{roleRef}},
		{name: "cluster-scoped controller of a cluster-scoped object", owner: role,
			obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, controller: true,
			want: []metav1.OwnerReference{{APIVersion: roleRef.APIVersion, Kind: "ClusterRole", Name: "reader", UID: "u-role", Controller: new(true), BlockOwnerDeletion: new(true)}}},
		{name: "an owner besides the controller", owner: web, obj: configMap("shop", "cfg", dbCtrl),
			want: []metav1.OwnerReference{dbCtrl, webRef}},
		{name: "setting again replaces, never duplicates", owner: web, obj: configMap("shop", "cfg", roleRef, webCtrl), controller: true,
			want: []metav1.OwnerReference{roleRef, webCtrl}},
		{name: "an owner again stays the controller", owner: web, obj: configMap("shop", "cfg", webCtrl),
			want: []metav1.OwnerReference{webCtrl}},
		{name: "BlockOwnerDeletion(false) on an existing controller", owner: web, obj: configMap("shop", "cfg", webCtrl), controller: true,
			opts: []owners.Option{owners.BlockOwnerDeletion(false)},
			want: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "u-web", Controller: new(true), BlockOwnerDeletion: new(false)}}},
		{name: "a re-created owner takes its old reference over", owner: web, obj: configMap("shop", "cfg", oldWeb), controller: true,
			want: []metav1.OwnerReference{webCtrl}},
		{name: "cross namespace", owner: web, obj: configMap("other", "cfg"), controller: true,
			wantErr: `set controller ConfigMap other/cfg: owner Deployment shop/web is in namespace "shop", not "other": owner references do not cross namespaces (the garbage collector would find no owner and delete the object)`},
		{name: "namespaced owner of a cluster-scoped object", owner: web, obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}},
			wantErr: "set owner Namespace team: namespaced owner Deployment shop/web cannot own an object without a namespace: a cluster-scoped object's owners must be cluster-scoped (if it is namespaced, set its namespace first)"},
		{name: "owner not created yet", owner: deploy("shop", "web", ""), obj: configMap("shop", "cfg"), controller: true,
			wantErr: "set controller ConfigMap shop/cfg: owner Deployment shop/web has no UID: create it (or read it from the API server) before it can own anything"},
		{name: "second controller", owner: web, obj: configMap("shop", "cfg", roleRef, dbCtrl), controller: true,
			wantErr: "set controller ConfigMap shop/cfg: already controlled by StatefulSet db (uid u-db): Deployment web cannot be a second controller"},
		{name: "itself", owner: web, obj: deploy("shop", "web", "u-web"),
			wantErr: "set owner Deployment shop/web: Deployment shop/web cannot own itself"},
		{name: "nil owner", owner: nil, obj: configMap("shop", "cfg"),
			wantErr: "set owner ConfigMap shop/cfg: the owner is nil"},
		{name: "owner's type not in the scheme", owner: unregistered, obj: configMap("shop", "cfg"),
			wantErr: "set owner ConfigMap shop/cfg: owner notRegistered shop/x: no kind is registered for the type owners_test.notRegistered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.obj.DeepCopyObject()
			var err error
			if tt.controller {
				err = owners.SetController(tt.owner, tt.obj, scheme, tt.opts...)
			} else {
				err = owners.SetOwner(tt.owner, tt.obj, scheme, tt.opts...)
			}
			if tt.wantErr != "" {
				if err == nil || koperrors.KindOf(err) != koperrors.Invalid || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error %v\nwant Invalid: %s", err, tt.wantErr)
				}
				if diff := cmp.Diff(before, tt.obj); diff != "" {
					t.Errorf("object changed on error (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, tt.obj.GetOwnerReferences()); diff != "" {
				t.Errorf("owner references (-want +got):\n%s", diff)
			}
		})
	}
}

// SetController never writes into a slice the caller's object shares with
// another.
func TestSetDoesNotAlias(t *testing.T) {
	refs := make([]metav1.OwnerReference, 1, 4)
	refs[0] = metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "u-x"}
	a, b := configMap("shop", "a"), configMap("shop", "b")
	a.OwnerReferences, b.OwnerReferences = refs, refs
	if err := owners.SetController(deploy("shop", "web", "u-web"), a, scheme); err != nil {
		t.Fatal(err)
	}
	if err := owners.SetController(deploy("shop", "api", "u-api"), b, scheme); err != nil {
		t.Fatal(err)
	}
	if a.OwnerReferences[1].Name != "web" || b.OwnerReferences[1].Name != "api" {
		t.Errorf("references shared: a %v, b %v", a.OwnerReferences, b.OwnerReferences)
	}
}

func TestApplyConfigurations(t *testing.T) {
	web := deploy("shop", "web", "u-web")
	tests := []struct {
		name       string
		child      runtime.ApplyConfiguration
		controller bool
		opts       []owners.Option
		wantErr    string
	}{
		{name: "owner", child: corev1ac.ConfigMap("cfg", "shop")},
		{name: "controller", child: corev1ac.ConfigMap("cfg", "shop"), controller: true},
		{name: "controller, not blocking", child: corev1ac.ConfigMap("cfg", "shop"), controller: true,
			opts: []owners.Option{owners.BlockOwnerDeletion(false)}},
		{name: "cross namespace", child: corev1ac.ConfigMap("cfg", "other"), controller: true,
			wantErr: `controller reference ConfigMap other/cfg: owner Deployment shop/web is in namespace "shop", not "other"`},
		{name: "not a generated apply configuration", child: runtime.ApplyConfiguration(nil),
			wantErr: "controller reference: the child <nil> is not a generated apply configuration", controller: true},
		{name: "cluster-scoped child", child: corev1ac.Namespace("team"),
			wantErr: "owner reference Namespace team: namespaced owner Deployment shop/web cannot own an object without a namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ac *metav1ac.OwnerReferenceApplyConfiguration
			var err error
			typedObj := configMap("shop", "cfg")
			if tt.controller {
				_ = owners.SetController(web, typedObj, scheme, tt.opts...)
				ac, err = owners.ControllerApplyConfiguration(web, tt.child, scheme, tt.opts...)
			} else {
				_ = owners.SetOwner(web, typedObj, scheme, tt.opts...)
				ac, err = owners.OwnerApplyConfiguration(web, tt.child, scheme, tt.opts...)
			}
			if tt.wantErr != "" {
				if err == nil || koperrors.KindOf(err) != koperrors.Invalid || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error %v\nwant Invalid: %s...", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The apply form says exactly what the typed form says.
			asTyped := metav1.OwnerReference{APIVersion: *ac.APIVersion, Kind: *ac.Kind, Name: *ac.Name, UID: *ac.UID,
				Controller: ac.Controller, BlockOwnerDeletion: ac.BlockOwnerDeletion}
			if diff := cmp.Diff(typedObj.OwnerReferences, []metav1.OwnerReference{asTyped}); diff != "" {
				t.Errorf("apply form differs from the typed form (-typed +apply):\n%s", diff)
			}
		})
	}
}

// ControllerReference and OwnerReference return what SetController and
// SetOwner write, without an object; an owner that cannot own is refused.
func TestStandaloneReferences(t *testing.T) {
	web := deploy("shop", "web", "u-web")
	for _, controller := range []bool{true, false} {
		for _, opts := range [][]owners.Option{nil, {owners.BlockOwnerDeletion(false)}} {
			cm := configMap("shop", "cfg")
			var ref metav1.OwnerReference
			var err error
			if controller {
				_ = owners.SetController(web, cm, scheme, opts...)
				ref, err = owners.ControllerReference(web, scheme, opts...)
			} else {
				_ = owners.SetOwner(web, cm, scheme, opts...)
				ref, err = owners.OwnerReference(web, scheme, opts...)
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(cm.OwnerReferences, []metav1.OwnerReference{ref}); diff != "" {
				t.Errorf("controller %v, options %v: the reference differs from the one set (-set +returned):\n%s", controller, opts, diff)
			}
		}
	}
	for _, tc := range []struct {
		name    string
		owner   client.Object
		wantErr string
	}{
		{"nil owner", nil, "controller reference: the owner is nil"},
		{"no UID", deploy("shop", "web", ""), "controller reference: owner Deployment shop/web has no UID"},
		{"unknown kind", &notRegistered{}, "controller reference: owner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := owners.ControllerReference(tc.owner, scheme)
			if err == nil || koperrors.KindOf(err) != koperrors.Invalid || !strings.HasPrefix(err.Error(), tc.wantErr) || ref != (metav1.OwnerReference{}) {
				t.Errorf("ControllerReference = %+v, %v; want nothing and an Invalid error %q...", ref, err, tc.wantErr)
			}
		})
	}
}

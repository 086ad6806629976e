package errors_test

import (
	stderrors "errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
)

func TestErrorMessage(t *testing.T) {
	cause := fmt.Errorf("boom")
	deploy := koperrors.Object{GroupVersionKind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Namespace: "default", Name: "web"}
	tests := []struct {
		name string
		err  *koperrors.Error
		want string
	}{
		{"all parts", &koperrors.Error{Op: "apply", Object: deploy, Err: cause}, "apply Deployment default/web: boom"},
		{"cluster scoped", &koperrors.Error{Op: "delete", Object: koperrors.Object{GroupVersionKind: schema.GroupVersionKind{Kind: "Namespace"}, Name: "web"}, Err: cause}, "delete Namespace web: boom"},
		{"kind only", &koperrors.Error{Op: "list", Object: koperrors.Object{GroupVersionKind: schema.GroupVersionKind{Kind: "Deployment"}}, Err: cause}, "list Deployment: boom"},
		{"no kind", &koperrors.Error{Op: "get", Object: koperrors.Object{Namespace: "default", Name: "web"}, Err: cause}, "get default/web: boom"},
		{"no object", &koperrors.Error{Op: "list", Err: cause}, "list: boom"},
		{"no op", &koperrors.Error{Object: deploy, Err: cause}, "Deployment default/web: boom"},
		{"only cause", &koperrors.Error{Err: cause}, "boom"},
		{"no cause", &koperrors.Error{Kind: koperrors.Invalid, Op: "apply", Object: deploy}, "apply Deployment default/web"},
		{"nothing", &koperrors.Error{Kind: koperrors.Timeout}, "Timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.err.Error()); diff != "" {
				t.Errorf("Error() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestObjectOf(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Widget")
	u.SetName("w")
	withTypeMeta := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: "reader"},
	}
	var nilCM *corev1.ConfigMap
	tests := []struct {
		name    string
		obj     client.Object
		want    koperrors.Object
		wantStr string
	}{
		{"typed without TypeMeta", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}},
			koperrors.Object{GroupVersionKind: schema.GroupVersionKind{Kind: "ConfigMap"}, Namespace: "ns", Name: "cm"}, "ConfigMap ns/cm"},
		{"typed with TypeMeta", withTypeMeta,
			koperrors.Object{GroupVersionKind: rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), Name: "reader"}, "ClusterRole reader"},
		{"unstructured", u,
			koperrors.Object{GroupVersionKind: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, Name: "w"}, "Widget w"},
		{"unstructured without kind", &unstructured.Unstructured{Object: map[string]any{}},
			koperrors.Object{GroupVersionKind: schema.GroupVersionKind{Kind: "Unstructured"}}, "Unstructured"},
		{"typed nil pointer", nilCM, koperrors.Object{}, ""},
		{"nil", nil, koperrors.Object{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := koperrors.ObjectOf(tt.obj)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ObjectOf() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStr, got.String()); diff != "" {
				t.Errorf("String() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWrap(t *testing.T) {
	cause := apierrors.NewNotFound(gr, "web")
	obj := koperrors.Object{GroupVersionKind: schema.GroupVersionKind{Kind: "Deployment"}, Namespace: "default", Name: "web"}
	tests := []struct {
		name string
		err  error
		want *koperrors.Error // nil: the result is nil
	}{
		{"classifies", koperrors.Wrap(cause, "get", obj), &koperrors.Error{Kind: koperrors.NotFound, Op: "get", Object: obj, Err: cause}},
		{"explicit kind", koperrors.WrapKind(koperrors.Invalid, cause, "check", obj), &koperrors.Error{Kind: koperrors.Invalid, Op: "check", Object: obj, Err: cause}},
		{"inner kind wins", koperrors.Wrap(koperrors.Errorf(koperrors.Config, "bad"), "load", koperrors.Object{}), &koperrors.Error{Kind: koperrors.Config, Op: "load"}},
		{"wrap nil", koperrors.Wrap(nil, "apply", obj), nil},
		{"wrap kind nil", koperrors.WrapKind(koperrors.IO, nil, "read", obj), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == nil {
				if tt.err != nil {
					t.Fatalf("got %v, want nil", tt.err)
				}
				return
			}
			e, ok := koperrors.AsType[*koperrors.Error](tt.err)
			if !ok {
				t.Fatalf("got %T, want *Error", tt.err)
			}
			// The cause is compared by identity below, not by value.
			if diff := cmp.Diff(tt.want, e, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Err" }, cmp.Ignore())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tt.want.Err != nil && !koperrors.Is(tt.err, tt.want.Err) {
				t.Errorf("Is(err, cause) = false: the cause is not reachable")
			}
		})
	}
	// The cause's own helpers keep working through an *Error.
	if !apierrors.IsNotFound(koperrors.Wrap(cause, "get", obj)) {
		t.Error("apierrors.IsNotFound(Wrap(notFound)) = false")
	}
}

func TestStdlibReexports(t *testing.T) {
	base := koperrors.New("base")
	wrapped := fmt.Errorf("w: %w", base)
	if !koperrors.Is(wrapped, base) || koperrors.Unwrap(wrapped) != base { //nolint:errorlint // identity is what is tested
		t.Error("Is/Unwrap do not behave like the standard library")
	}
	var target *koperrors.Error
	if koperrors.As(wrapped, &target) {
		t.Error("As found an *Error that is not there")
	}
	kerr := koperrors.Errorf(koperrors.IO, "disk")
	if !koperrors.As(fmt.Errorf("x: %w", kerr), &target) || target.Kind != koperrors.IO {
		t.Errorf("As = %v", target)
	}
	if e, ok := koperrors.AsType[*koperrors.Error](fmt.Errorf("x: %w", kerr)); !ok || e.Kind != koperrors.IO {
		t.Errorf("AsType = %v, %t", e, ok)
	}
	if !koperrors.Is(koperrors.Join(base, kerr), kerr) {
		t.Error("Join lost an error")
	}
	if !stderrors.Is(fmt.Errorf("op: %w", koperrors.ErrUnsupported), stderrors.ErrUnsupported) {
		t.Error("ErrUnsupported is not the standard library's")
	}
}

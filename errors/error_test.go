package errors_test

import (
	stderrors "errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

func TestErrorMessage(t *testing.T) {
	cause := fmt.Errorf("boom")
	deploy := kopmeta.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}
	tests := []struct {
		name string
		err  *koperrors.Error
		want string
	}{
		{"all parts", &koperrors.Error{Op: "apply", Object: deploy, Err: cause}, "apply Deployment default/web: boom"},
		{"cluster scoped", &koperrors.Error{Op: "delete", Object: kopmeta.ObjectRef{Kind: "Namespace", Name: "web"}, Err: cause}, "delete Namespace web: boom"},
		{"kind only", &koperrors.Error{Op: "list", Object: kopmeta.ObjectRef{Kind: "Deployment"}, Err: cause}, "list Deployment: boom"},
		{"no kind", &koperrors.Error{Op: "get", Object: kopmeta.ObjectRef{Namespace: "default", Name: "web"}, Err: cause}, "get default/web: boom"},
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

func TestWrap(t *testing.T) {
	cause := apierrors.NewNotFound(gr, "web")
	obj := kopmeta.ObjectRef{Kind: "Deployment", Namespace: "default", Name: "web"}
	tests := []struct {
		name string
		err  error
		want *koperrors.Error // nil: the result is nil
	}{
		{"classifies", koperrors.Wrap(cause, "get", obj), &koperrors.Error{Kind: koperrors.NotFound, Op: "get", Object: obj, Err: cause}},
		{"explicit kind", koperrors.WrapKind(koperrors.Invalid, cause, "check", obj), &koperrors.Error{Kind: koperrors.Invalid, Op: "check", Object: obj, Err: cause}},
		{"inner kind wins", koperrors.Wrap(koperrors.Errorf(koperrors.Config, "bad"), "load", kopmeta.ObjectRef{}), &koperrors.Error{Kind: koperrors.Config, Op: "load"}},
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
			e, ok := stderrors.AsType[*koperrors.Error](tt.err)
			if !ok {
				t.Fatalf("got %T, want *Error", tt.err)
			}
			// The cause is compared by identity below, not by value.
			if diff := cmp.Diff(tt.want, e, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Err" }, cmp.Ignore())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tt.want.Err != nil && !stderrors.Is(tt.err, tt.want.Err) {
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
	base := stderrors.New("base")
	wrapped := fmt.Errorf("w: %w", base)
	if !stderrors.Is(wrapped, base) || stderrors.Unwrap(wrapped) != base { //nolint:errorlint // identity is what is tested
		t.Error("Is/Unwrap do not behave like the standard library")
	}
	var target *koperrors.Error
	if stderrors.As(wrapped, &target) {
		t.Error("As found an *Error that is not there")
	}
	kerr := koperrors.Errorf(koperrors.IO, "disk")
	if !stderrors.As(fmt.Errorf("x: %w", kerr), &target) || target.Kind != koperrors.IO {
		t.Errorf("As = %v", target)
	}
	if e, ok := stderrors.AsType[*koperrors.Error](fmt.Errorf("x: %w", kerr)); !ok || e.Kind != koperrors.IO {
		t.Errorf("AsType = %v, %t", e, ok)
	}
	if !stderrors.Is(stderrors.Join(base, kerr), kerr) {
		t.Error("Join lost an error")
	}
	if !stderrors.Is(fmt.Errorf("op: %w", stderrors.ErrUnsupported), stderrors.ErrUnsupported) {
		t.Error("ErrUnsupported is not the standard library's")
	}
}

package errors_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	koperrors "github.com/kopgo/kopgo/errors"
)

var gr = schema.GroupResource{Group: "apps", Resource: "deployments"}

func realErrors(t *testing.T) map[string]error {
	t.Helper()
	// A real refused connection: listen, close, dial.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	_, refused := net.Dial("tcp", addr)
	if refused == nil {
		t.Fatal("dial to a closed port succeeded")
	}
	_, missing := os.Open(filepath.Join(t.TempDir(), "missing"))
	var v map[string]any
	syntax := json.Unmarshal([]byte("{"), &v)
	var n int
	typ := json.Unmarshal([]byte(`"x"`), &n)
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	_, _, notRegistered := runtime.NewScheme().ObjectKinds(&corev1.ConfigMap{})
	_, clientcmdErr := clientcmd.NewDefaultClientConfig(*clientcmdapiEmpty(), nil).ClientConfig()
	return map[string]error{
		"refused": refused, "missing file": missing, "json syntax": syntax, "json type": typ,
		"deadline": ctx.Err(), "not registered": notRegistered, "empty kubeconfig": clientcmdErr,
	}
}

func TestKindOf(t *testing.T) {
	real := realErrors(t)
	tests := []struct {
		name string
		err  error
		want koperrors.Kind
	}{
		{"nil", nil, koperrors.Internal},
		{"plain", fmt.Errorf("boom"), koperrors.Internal},
		{"canceled", context.Canceled, koperrors.Internal},
		{"not found", apierrors.NewNotFound(gr, "web"), koperrors.NotFound},
		{"gone", apierrors.NewGone("too old"), koperrors.NotFound}, //nolint:staticcheck // servers still answer 410 Gone
		{"expired", apierrors.NewResourceExpired("expired"), koperrors.NotFound},
		{"conflict", apierrors.NewConflict(gr, "web", fmt.Errorf("modified")), koperrors.Conflict},
		{"already exists", apierrors.NewAlreadyExists(gr, "web"), koperrors.Conflict},
		{"forbidden", apierrors.NewForbidden(gr, "web", fmt.Errorf("rbac")), koperrors.Forbidden},
		{"unauthorized", apierrors.NewUnauthorized("who"), koperrors.Forbidden},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web",
			field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), -1, "must be >= 0")}), koperrors.Invalid},
		{"bad request", apierrors.NewBadRequest("bad"), koperrors.Invalid},
		{"method not supported", apierrors.NewMethodNotSupported(gr, "patch"), koperrors.Invalid},
		{"too large", apierrors.NewRequestEntityTooLargeError("big"), koperrors.Invalid},
		{"no kind match", &apimeta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "x.io", Kind: "Widget"}}, koperrors.Invalid},
		{"timeout", apierrors.NewTimeoutError("slow", 1), koperrors.Timeout},
		{"server timeout", apierrors.NewServerTimeout(gr, "get", 1), koperrors.Timeout},
		{"deadline", real["deadline"], koperrors.Timeout},
		{"service unavailable", apierrors.NewServiceUnavailable("down"), koperrors.Unavailable},
		{"too many requests", apierrors.NewTooManyRequests("slow down", 1), koperrors.Unavailable},
		{"internal error", apierrors.NewInternalError(fmt.Errorf("etcd")), koperrors.Unavailable},
		{"connection refused", real["refused"], koperrors.Unavailable},
		{"unexpected EOF", io.ErrUnexpectedEOF, koperrors.Unavailable},
		{"json syntax", real["json syntax"], koperrors.Serialization},
		{"json type", real["json type"], koperrors.Serialization},
		{"not registered", real["not registered"], koperrors.Serialization},
		{"missing file", real["missing file"], koperrors.IO},
		{"not in cluster", rest.ErrNotInCluster, koperrors.Config},
		{"empty kubeconfig", real["empty kubeconfig"], koperrors.Config},
		{"explicit kind wins", koperrors.WrapKind(koperrors.Config, apierrors.NewNotFound(gr, "web"), "load", koperrors.Object{}), koperrors.Config},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil && tt.name != "nil" {
				t.Fatal("test error is nil")
			}
			// The kind survives wrapping at any depth and kopgo's markers.
			for depth, err := range []error{
				tt.err,
				wrapN(tt.err, 1),
				wrapN(tt.err, 3),
				koperrors.Terminal(wrapN(tt.err, 2)),
				koperrors.RequeueAfter(tt.err, time.Second),
			} {
				if tt.err == nil && depth > 0 {
					break
				}
				if got := koperrors.KindOf(err); got != tt.want {
					t.Errorf("form %d: KindOf(%v) = %s, want %s", depth, err, got, tt.want)
				}
			}
		})
	}
}

func wrapN(err error, n int) error {
	for i := range n {
		err = fmt.Errorf("layer %d: %w", i, err)
	}
	return err
}

func TestIsHelpers(t *testing.T) {
	helpers := map[koperrors.Kind]func(error) bool{
		koperrors.Internal: koperrors.IsInternal, koperrors.NotFound: koperrors.IsNotFound,
		koperrors.Conflict: koperrors.IsConflict, koperrors.Forbidden: koperrors.IsForbidden,
		koperrors.Invalid: koperrors.IsInvalid, koperrors.Timeout: koperrors.IsTimeout,
		koperrors.Unavailable: koperrors.IsUnavailable, koperrors.Serialization: koperrors.IsSerialization,
		koperrors.IO: koperrors.IsIO, koperrors.Config: koperrors.IsConfig,
	}
	if len(helpers) != len(koperrors.Kinds()) {
		t.Fatalf("%d helpers for %d kinds", len(helpers), len(koperrors.Kinds()))
	}
	for _, kind := range koperrors.Kinds() {
		err := fmt.Errorf("outer: %w", koperrors.Errorf(kind, "inner"))
		for other, is := range helpers {
			if got, want := is(err), other == kind; got != want {
				t.Errorf("Is%s(error of kind %s) = %t, want %t", other, kind, got, want)
			}
			if is(nil) {
				t.Errorf("Is%s(nil) = true", other)
			}
		}
	}
}

func TestKindStrings(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range koperrors.Kinds() {
		s := k.String()
		if s == "" || seen[s] {
			t.Errorf("kind %d has empty or duplicate name %q", k, s)
		}
		seen[s] = true
	}
	if got := koperrors.Kind(200).String(); got != "Internal" {
		t.Errorf("out-of-range kind renders %q, want Internal (label values stay bounded)", got)
	}
}

func TestErrorMessage(t *testing.T) {
	cause := fmt.Errorf("boom")
	deploy := koperrors.Object{GroupVersionKind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Namespace: "default", Name: "web"}
	tests := []struct {
		name string
		err  *koperrors.Error
		want string
	}{
		{"all parts", &koperrors.Error{Op: "apply", Object: deploy, Err: cause}, "apply Deployment default/web: boom"},
		{"cluster scoped", &koperrors.Error{Op: "delete", Object: koperrors.Object{GroupVersionKind: schema.GroupVersionKind{Kind: "Namespace"}, Name: "team-a"}, Err: cause}, "delete Namespace team-a: boom"},
		{"no object", &koperrors.Error{Op: "list", Err: cause}, "list: boom"},
		{"no op", &koperrors.Error{Object: deploy, Err: cause}, "Deployment default/web: boom"},
		{"only cause", &koperrors.Error{Err: cause}, "boom"},
		{"no cause", &koperrors.Error{Kind: koperrors.Invalid, Op: "apply", Object: deploy}, "apply Deployment default/web"},
		{"nothing", &koperrors.Error{Kind: koperrors.Timeout}, "Timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestObjectOf(t *testing.T) {
	typed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Widget")
	u.SetName("w")
	var nilCM *corev1.ConfigMap
	tests := []struct {
		name string
		obj  interface {
			metav1.Object
			runtime.Object
		}
		want string
	}{
		{"typed without TypeMeta", typed, "ConfigMap ns/cm"},
		{"unstructured", u, "Widget w"},
		{"typed nil pointer", nilCM, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := koperrors.ObjectOf(tt.obj).String(); got != tt.want {
				t.Errorf("ObjectOf().String() = %q, want %q", got, tt.want)
			}
		})
	}
	if got := koperrors.ObjectOf(u).Group; got != "example.com" {
		t.Errorf("group from TypeMeta = %q, want example.com", got)
	}
}

func TestWrapNil(t *testing.T) {
	if err := koperrors.Wrap(nil, "apply", koperrors.Object{}); err != nil {
		t.Errorf("Wrap(nil) = %v, want nil", err)
	}
	if err := koperrors.WrapKind(koperrors.IO, nil, "read", koperrors.Object{}); err != nil {
		t.Errorf("WrapKind(nil) = %v, want nil", err)
	}
	if err := koperrors.Terminal(nil); err != nil {
		t.Errorf("Terminal(nil) = %v, want nil", err)
	}
}

func TestMarkers(t *testing.T) {
	cause := apierrors.NewNotFound(gr, "web")
	tests := []struct {
		name         string
		err          error
		terminal     bool
		requeue      time.Duration
		hasRequeue   bool
		requeueOnly  bool
		reachesCause bool
	}{
		{"plain", cause, false, 0, false, false, true},
		{"terminal", koperrors.Terminal(cause), true, 0, false, false, true},
		{"wrapped terminal", fmt.Errorf("reconcile: %w", koperrors.Terminal(cause)), true, 0, false, false, true},
		{"requeue with cause", koperrors.RequeueAfter(cause, time.Minute), false, time.Minute, true, false, true},
		{"requeue only", koperrors.RequeueAfter(nil, 30*time.Second), false, 30 * time.Second, true, true, false},
		{"terminal requeue is not requeue only", koperrors.Terminal(koperrors.RequeueAfter(nil, time.Second)), true, time.Second, true, false, false},
		{"joined", koperrors.Join(fmt.Errorf("other"), koperrors.Terminal(cause)), true, 0, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := koperrors.IsTerminal(tt.err); got != tt.terminal {
				t.Errorf("IsTerminal = %t, want %t", got, tt.terminal)
			}
			d, ok := koperrors.RequeueAfterOf(tt.err)
			if d != tt.requeue || ok != tt.hasRequeue {
				t.Errorf("RequeueAfterOf = %s, %t, want %s, %t", d, ok, tt.requeue, tt.hasRequeue)
			}
			if got := koperrors.IsRequeueOnly(tt.err); got != tt.requeueOnly {
				t.Errorf("IsRequeueOnly = %t, want %t", got, tt.requeueOnly)
			}
			if got := koperrors.Is(tt.err, cause); got != tt.reachesCause {
				t.Errorf("Is(err, cause) = %t, want %t", got, tt.reachesCause)
			}
			if got := apierrors.IsNotFound(tt.err); got != tt.reachesCause {
				t.Errorf("apierrors.IsNotFound = %t, want %t (the status error must stay reachable)", got, tt.reachesCause)
			}
		})
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
	if e, ok := koperrors.AsType[*koperrors.Error](fmt.Errorf("x: %w", kerr)); !ok || e.Kind != koperrors.IO {
		t.Errorf("AsType = %v, %t", e, ok)
	}
	if !koperrors.Is(koperrors.Join(base, kerr), kerr) {
		t.Error("Join lost an error")
	}
	if koperrors.ErrUnsupported == nil {
		t.Error("ErrUnsupported is nil")
	}
}

package meta_test

import (
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	kopmeta "github.com/kopgo/kopgo/meta"
)

// scheme knows the built-in kinds, as a manager's scheme does.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// ownerFor is an owner with the identity ref names, kind in its TypeMeta
// (for a nil scheme).
func ownerFor(ref metav1.OwnerReference, ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(ref.APIVersion)
	u.SetKind(ref.Kind)
	u.SetName(ref.Name)
	u.SetUID(ref.UID)
	u.SetNamespace(ns)
	return u
}

// deploy is a typed owner as a client returns it: empty TypeMeta.
func deploy(ns, name string, uid types.UID) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid}}
}

// problem is one expected entry of a ValidationError.
type problem struct {
	Type  field.ErrorType
	Field string
	Value any
}

// problemsOf returns the entries of err, which must be nil or a
// *kopmeta.ValidationError.
func problemsOf(t *testing.T, err error) []problem {
	t.Helper()
	if err == nil {
		return nil
	}
	verr, ok := errors.AsType[*kopmeta.ValidationError](err)
	if !ok {
		t.Fatalf("error %q is a %T, want a *kopmeta.ValidationError", err, err)
	}
	out := make([]problem, len(verr.Fields))
	for i, f := range verr.Fields {
		out[i] = problem{f.Type, f.Field, f.BadValue}
	}
	return out
}

func invalid(path string, value any) problem { return problem{field.ErrorTypeInvalid, path, value} }
func required(path string) problem           { return problem{field.ErrorTypeRequired, path, ""} }

package resources

import (
	"fmt"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/scope"
)

// Object is the constraint of the generic operations: P is a pointer to T
// and a client.Object, as *corev1.ConfigMap is. Go infers P from T, so a
// call names the struct type alone:
//
//	cm, err := resources.Get[corev1.ConfigMap](ctx, c, scope.Namespaced("shop"), "settings")
//
// A fresh object is P(new(T)): no reflection.
type Object[T any] interface {
	*T
	client.Object
}

// ObjectList is [Object] for lists, such as *corev1.ConfigMapList.
type ObjectList[T any] interface {
	*T
	client.ObjectList
}

// Reader reads objects and knows their kinds and the scopes of kinds (its
// scheme and RESTMapper): what every operation that takes a [scope.Scope]
// needs to check it before sending anything. client.Client and a manager's
// (cached) client satisfy it.
type Reader interface {
	client.Reader
	Scheme() *runtime.Scheme
	RESTMapper() apimeta.RESTMapper
}

// target checks scope s against the kind of obj (an object or a list, whose
// items' kind is checked; AllNamespaces fits lists only) and returns the object errors should name: the
// kind from the scheme, the namespace of s and name. A scope that does not
// fit is an error of Kind Invalid for operation op, and no request is sent.
func target(k Reader, op string, s scope.Scope, obj runtime.Object, name string) (kopmeta.ObjectRef, error) {
	gvk, err := kindOf(k, obj)
	if err != nil {
		return kopmeta.ObjectRef{Namespace: s.Namespace(), Name: name}, koperrors.WrapKind(koperrors.Invalid, err, op, kopmeta.ObjectRef{Namespace: s.Namespace(), Name: name})
	}
	o := kopmeta.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: s.Namespace(), Name: name}
	if err := s.Check(k.RESTMapper(), gvk); err != nil {
		return o, koperrors.WrapKind(koperrors.Invalid, err, op, o)
	}
	if s == scope.AllNamespaces && !apimeta.IsListType(obj) {
		return o, koperrors.WrapKind(koperrors.Invalid,
			fmt.Errorf("scope AllNamespaces cannot name one object: use scope.Namespaced(ns)"), op, o)
	}
	return o, nil
}

// kindOf is obj's kind from k's scheme (or obj's own TypeMeta for
// unstructured and metadata-only objects); for a list, its items' kind.
func kindOf(k Reader, obj runtime.Object) (schema.GroupVersionKind, error) {
	gvk, err := apiutil.GVKForObject(obj, k.Scheme())
	if err != nil {
		return gvk, err
	}
	if apimeta.IsListType(obj) {
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	return gvk, nil
}

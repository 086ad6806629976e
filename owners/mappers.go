package owners

import (
	"context"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/scope"
)

// MapperOptions are the options of [LabelMapper] and [ReferenceMapper].
type MapperOptions struct {
	// OwnerScope says where owners live; see [OwnerScope].
	OwnerScope scope.Scope
	// ControllerOnly makes [ReferenceMapper] follow the controller
	// reference only.
	ControllerOnly bool
}

// MapperOption is one option of the mappers.
type MapperOption interface {
	// ApplyToMapperOptions sets the option on o.
	ApplyToMapperOptions(o *MapperOptions)
}

// OwnerScope says where the owners a mapper returns live:
//
//   - unset (the default), [scope.AllNamespaces], or for [ReferenceMapper]
//     any [scope.Namespaced] scope: a namespaced owner kind, with owners in
//     the watched object's namespace;
//   - [scope.Namespaced](ns) for [LabelMapper]: owners in namespace ns,
//     whatever the watched object's;
//   - [scope.Cluster]: a cluster-scoped owner kind.
//
// Use it as owners.OwnerScope(scope.Cluster).
type OwnerScope scope.Scope

// ApplyToMapperOptions implements [MapperOption].
func (s OwnerScope) ApplyToMapperOptions(o *MapperOptions) { o.OwnerScope = scope.Scope(s) }

// ControllerOnly makes [ReferenceMapper] follow only the controller
// reference, as controller-runtime's Owns does.
type ControllerOnly bool

// ApplyToMapperOptions implements [MapperOption].
func (c ControllerOnly) ApplyToMapperOptions(o *MapperOptions) { o.ControllerOnly = bool(c) }

func mapperOptions(opts []MapperOption) MapperOptions {
	var o MapperOptions
	for _, opt := range opts {
		if opt != nil {
			opt.ApplyToMapperOptions(&o)
		}
	}
	return o
}

// LabelMapper maps a watched object to the owner its label key names (see
// [SetOwnerLabel]), by default in the object's own namespace. It is for
// secondary watches of objects that carry no owner reference: made by
// someone else, or living where a reference cannot point (another
// namespace, with [OwnerScope]). An object without the label maps to
// nothing.
//
//	bldr.Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(owners.LabelMapper("example.com/webapp")))
//
// A key that is not a qualified name, or an invalid [OwnerScope], makes a
// mapper that maps nothing and logs the mistake once.
func LabelMapper(key string, opts ...MapperOption) handler.MapFunc {
	return TypedLabelMapper[client.Object](key, opts...)
}

// TypedLabelMapper is [LabelMapper] for typed watches
// (handler.TypedEnqueueRequestsFromMapFunc).
func TypedLabelMapper[T client.Object](key string, opts ...MapperOption) handler.TypedMapFunc[T, reconcile.Request] {
	o := mapperOptions(opts)
	err := o.validate()
	if msgs := validation.IsQualifiedName(key); len(msgs) > 0 && err == nil {
		err = koperrors.Errorf(koperrors.Invalid, "owner label key %q: %s", key, strings.Join(msgs, "; "))
	}
	if err != nil {
		return broken[T](err, "LabelMapper")
	}
	return func(_ context.Context, obj T) []reconcile.Request {
		name, ok := LabelledOwner(obj, key)
		if !ok {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.ownerNamespace(obj, true), Name: name}}}
	}
}

// ReferenceMapper maps a watched object to its owners of kind ownerKind
// found in its owner references, any version; with [ControllerOnly] to its
// controller only. A namespaced object's owners are in its namespace, or
// cluster-scoped: say which with [OwnerScope] (the default is namespaced).
//
//	bldr.Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(
//		owners.ReferenceMapper(schema.GroupKind{Group: "example.com", Kind: "WebApp"})))
//
// An invalid [OwnerScope] makes a mapper that maps nothing and logs the
// mistake once.
func ReferenceMapper(ownerKind schema.GroupKind, opts ...MapperOption) handler.MapFunc {
	return TypedReferenceMapper[client.Object](ownerKind, opts...)
}

// TypedReferenceMapper is [ReferenceMapper] for typed watches
// (handler.TypedEnqueueRequestsFromMapFunc).
func TypedReferenceMapper[T client.Object](ownerKind schema.GroupKind, opts ...MapperOption) handler.TypedMapFunc[T, reconcile.Request] {
	o := mapperOptions(opts)
	if err := o.validate(); err != nil {
		return broken[T](err, "ReferenceMapper")
	}
	return func(_ context.Context, obj T) []reconcile.Request {
		var reqs []reconcile.Request
		for _, ref := range obj.GetOwnerReferences() {
			if o.ControllerOnly && (ref.Controller == nil || !*ref.Controller) {
				continue
			}
			if ref.Kind != ownerKind.Kind || groupOf(ref.APIVersion) != ownerKind.Group {
				continue
			}
			req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.ownerNamespace(obj, false), Name: ref.Name}}
			if !slices.Contains(reqs, req) {
				reqs = append(reqs, req)
			}
		}
		return reqs
	}
}

// validate checks the scope given, if any.
func (o MapperOptions) validate() error {
	if o.OwnerScope.IsZero() {
		return nil
	}
	return o.OwnerScope.Validate()
}

// ownerNamespace is where obj's owner lives.
func (o MapperOptions) ownerNamespace(obj client.Object, label bool) string {
	s := o.OwnerScope
	switch {
	case s == scope.Cluster:
		return ""
	case label && s.Namespace() != "":
		return s.Namespace()
	default:
		return obj.GetNamespace()
	}
}

// broken is the mapper made from a mistake: it maps nothing, and says why
// in the log the first time it is called.
func broken[T client.Object](err error, what string) handler.TypedMapFunc[T, reconcile.Request] {
	var once sync.Once
	return func(ctx context.Context, _ T) []reconcile.Request {
		once.Do(func() { log.FromContext(ctx).Error(err, "Mapper maps nothing", "mapper", what) })
		return nil
	}
}

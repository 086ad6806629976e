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
	"github.com/kopgo/kopgo/internal/ownerref"
	"github.com/kopgo/kopgo/scope"
)

// LabelMapper maps a watched object to the owner its label key names (see
// [SetOwnerLabel]), by default in the object's own namespace. It is for
// secondary watches of objects that carry no owner reference: made by
// someone else, or living where a reference cannot point (another
// namespace, with [OwnerScope]). An object without the label maps to
// nothing. Options: [OwnerScope].
//
//	bldr.Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(owners.LabelMapper("example.com/webapp")))
//
// A key that is not a qualified name, or an invalid [OwnerScope], makes a
// mapper that maps nothing and logs the mistake once.
func LabelMapper(key string, opts ...Option) handler.MapFunc {
	o := options(opts)
	err := o.validate()
	if msgs := validation.IsQualifiedName(key); len(msgs) > 0 && err == nil {
		err = koperrors.Errorf(koperrors.Invalid, "owner label key %q: %s", key, strings.Join(msgs, "; "))
	}
	if err != nil {
		return broken(err, "LabelMapper")
	}
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		name := obj.GetLabels()[key]
		if name == "" {
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
//
// Both mappers are handler.MapFunc, for client.Object watches. A typed
// watch (handler.TypedEnqueueRequestsFromMapFunc) wraps one:
// func(ctx context.Context, s *corev1.Secret) []reconcile.Request { return m(ctx, s) }.
func ReferenceMapper(ownerKind schema.GroupKind, opts ...Option) handler.MapFunc {
	o := options(opts)
	if err := o.validate(); err != nil {
		return broken(err, "ReferenceMapper")
	}
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		var reqs []reconcile.Request
		for _, ref := range obj.GetOwnerReferences() {
			if o.ControllerOnly && (ref.Controller == nil || !*ref.Controller) {
				continue
			}
			if ref.Kind != ownerKind.Kind || ownerref.GroupOf(ref.APIVersion) != ownerKind.Group {
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
func (o Options) validate() error {
	if o.OwnerScope.IsZero() {
		return nil
	}
	return o.OwnerScope.Validate()
}

// ownerNamespace is where obj's owner lives.
func (o Options) ownerNamespace(obj client.Object, label bool) string {
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
func broken(err error, what string) handler.MapFunc {
	var once sync.Once
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		once.Do(func() { log.FromContext(ctx).Error(err, "Mapper maps nothing", "mapper", what) })
		return nil
	}
}

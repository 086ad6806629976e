package scope

import (
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	koperrors "github.com/kopgo/kopgo/errors"
)

// Check reports whether s fits the kind gvk, whose real scope it asks the
// RESTMapper for. It sends no request of its own: a RESTMapper answers from
// its discovery cache (controller-runtime's dynamic mapper discovers a group
// once, on its first use).
//
// It returns nil when s fits, and otherwise an error of Kind Invalid that
// names the kind, its real scope and the scope to use:
//
//	scope Namespaced("default") given for cluster-scoped kind rbac.authorization.k8s.io/v1, Kind=ClusterRole: use scope.Cluster
//	scope Cluster given for namespaced kind apps/v1, Kind=Deployment: use scope.Namespaced(ns) or scope.AllNamespaces
//
// An invalid scope (see [Scope.Validate]) is an error before the mapper is
// asked. A kind the mapper does not know is an error of Kind Invalid that
// names the kind and wraps the mapper's error, so apimeta.IsNoMatchError and
// errors.As with *apimeta.NoKindMatchError see it. Any other mapper error,
// such as a discovery request that failed, keeps the Kind [koperrors.KindOf]
// gives it (a refused connection is Unavailable, so it is retried).
func (s Scope) Check(mapper apimeta.RESTMapper, gvk schema.GroupVersionKind) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if gvk.Kind == "" {
		return koperrors.Errorf(koperrors.Invalid, "check scope %s: no kind given (%s)", s, gvk)
	}
	isNamespaced, err := kindIsNamespaced(mapper, gvk)
	if err != nil {
		return mapperError(err, "check scope %s for kind %s: %w", s, gvk, err)
	}
	switch {
	case isNamespaced && !s.isNamespaced():
		return koperrors.Errorf(koperrors.Invalid, "scope %s given for namespaced kind %s: use scope.Namespaced(ns) or scope.AllNamespaces", s, gvk)
	case !isNamespaced && s.isNamespaced():
		return koperrors.Errorf(koperrors.Invalid, "scope %s given for cluster-scoped kind %s: use scope.Cluster", s, gvk)
	}
	return nil
}

// mapperError is a RESTMapper's error with the message format: of Kind
// Invalid for a kind the mapper does not know, of its own kind otherwise (a
// failed discovery is Unavailable, and retried).
func mapperError(err error, format string, args ...any) error {
	kind := koperrors.KindOf(err)
	if apimeta.IsNoMatchError(err) {
		kind = koperrors.Invalid
	}
	return koperrors.Errorf(kind, format, args...)
}

// kindIsNamespaced asks the mapper whether gvk is namespaced, the way
// apiutil.IsGVKNamespaced does but without rewording the mapper's error.
func kindIsNamespaced(mapper apimeta.RESTMapper, gvk schema.GroupVersionKind) (bool, error) {
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return false, err
	}
	if mapping.Scope == nil {
		return false, fmt.Errorf("the RESTMapper returned no scope")
	}
	switch name := mapping.Scope.Name(); name {
	case apimeta.RESTScopeNameNamespace:
		return true, nil
	case apimeta.RESTScopeNameRoot:
		return false, nil
	default:
		return false, fmt.Errorf("the RESTMapper returned an unknown scope %q", name)
	}
}

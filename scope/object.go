package scope

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
)

// Of returns the scope an object of kind gvk in namespace has, as the
// RESTMapper tells: [Cluster] for a cluster-scoped kind (namespace is not
// looked at), Namespaced(namespace) for a namespaced kind, and
// [AllNamespaces] for a namespaced kind when namespace is empty. Errors are
// those of [Scope.Check]: a kind the mapper does not know is of Kind Invalid
// and wraps the mapper's NoKindMatchError (apimeta.IsNoMatchError sees it).
//
// With [Scope.ApplyTo] it checks an object's namespace against its kind
// before anything is sent:
//
//	s, err := scope.Of(c.RESTMapper(), gvk, obj.GetNamespace())
//	if err == nil {
//		err = s.ApplyTo(obj) // AllNamespaces: a namespaced object without a namespace
//	}
func Of(mapper apimeta.RESTMapper, gvk schema.GroupVersionKind, namespace string) (Scope, error) {
	if gvk.Kind == "" {
		return Scope{}, koperrors.Errorf(koperrors.Invalid, "scope of %s: no kind given", gvk)
	}
	isNamespaced, err := kindIsNamespaced(mapper, gvk)
	switch {
	case err != nil:
		return Scope{}, mapperError(err, "scope of kind %s: %w", gvk, err)
	case !isNamespaced:
		return Cluster, nil
	case namespace == "":
		return AllNamespaces, nil
	}
	return Namespaced(namespace), nil
}

// ListOptions returns the scope as controller-runtime list options:
// client.InNamespace(ns) for Namespaced(ns), and none for [Cluster] and
// [AllNamespaces], which list everything of their kind.
//
// It cannot fail, so it does not validate: the zero Scope and Namespaced("")
// also yield no option. Call [Scope.Check] (or [Scope.Validate]) first; the
// kopgo helpers that take a Scope do.
func (s Scope) ListOptions() []client.ListOption {
	if s.kind == namespaced {
		return []client.ListOption{client.InNamespace(s.namespace)}
	}
	return nil
}

// ApplyTo places obj in the scope:
//
//   - Namespaced(ns) sets obj's namespace to ns. It refuses to overwrite a
//     different namespace already set, since that is a bug at the caller, not
//     a choice to make silently.
//   - [Cluster] leaves obj alone, and refuses an object with a namespace.
//   - [AllNamespaces] and invalid scopes (see [Scope.Validate]) are refused:
//     an object lives in one place.
//
// Errors are of Kind Invalid and name both values; the caller names the
// object and what it was doing:
//
//	metadata.namespace is "team-a" but the scope is Namespaced("team-b")
//
// ApplyTo does not know obj's kind; [Of] gives the scope that fits it, and
// [Scope.Check] tests a scope against it.
func (s Scope) ApplyTo(obj client.Object) error {
	if err := s.Validate(); err != nil {
		return err
	}
	have := obj.GetNamespace()
	switch s.kind {
	case allNamespaces:
		return koperrors.Errorf(koperrors.Invalid, "scope AllNamespaces cannot place an object: an object of a namespaced kind must name its namespace")
	case cluster:
		if have != "" {
			return koperrors.Errorf(koperrors.Invalid, "metadata.namespace is %q but the kind is cluster-scoped (scope Cluster)", have)
		}
	case namespaced:
		if have != "" && have != s.namespace {
			return koperrors.Errorf(koperrors.Invalid, "metadata.namespace is %q but the scope is %s", have, s)
		}
		obj.SetNamespace(s.namespace)
	}
	return nil
}

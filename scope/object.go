package scope

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// Of returns the scope an existing object lives in: Namespaced(its
// namespace), or [Cluster] when its namespace is empty. It is meant for
// objects read from the API server, whose namespace tells their kind's scope;
// on an object being built, an empty namespace may just mean "not set yet".
func Of(obj client.Object) Scope {
	if ns := obj.GetNamespace(); ns != "" {
		return Namespaced(ns)
	}
	return Cluster
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
// Errors are of Kind Invalid and name the object and both values:
//
//	set scope ConfigMap team-a/settings: metadata.namespace is "team-a" but the scope is Namespaced("team-b")
//
// ApplyTo does not know obj's kind; [Scope.Check] or [Scope.CheckObject] is
// the test that the scope fits it.
func (s Scope) ApplyTo(obj client.Object) error {
	if err := s.Validate(); err != nil {
		return koperrors.WrapKind(koperrors.Invalid, err, "set scope", kopmeta.RefOf(obj))
	}
	have := obj.GetNamespace()
	switch s.kind {
	case allNamespaces:
		return koperrors.WrapKind(koperrors.Invalid,
			fmt.Errorf("scope AllNamespaces cannot place an object: use scope.Namespaced(ns)"), "set scope", kopmeta.RefOf(obj))
	case cluster:
		if have != "" {
			return koperrors.WrapKind(koperrors.Invalid,
				fmt.Errorf("metadata.namespace is %q but the scope is Cluster", have), "set scope", kopmeta.RefOf(obj))
		}
	case namespaced:
		if have != "" && have != s.namespace {
			return koperrors.WrapKind(koperrors.Invalid,
				fmt.Errorf("metadata.namespace is %q but the scope is %s", have, s), "set scope", kopmeta.RefOf(obj))
		}
		obj.SetNamespace(s.namespace)
	}
	return nil
}

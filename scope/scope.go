package scope

import (
	"fmt"
	"strconv"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
)

// kind is what a Scope says; its zero value is "unset".
type kind uint8

const (
	unset kind = iota
	namespaced
	cluster
	allNamespaces
)

// Scope says where an operation acts. It is a small comparable value: use
// it as a map key, compare it with ==, copy it freely. The zero value is an
// unset scope that [Scope.Check] rejects.
type Scope struct {
	kind      kind
	namespace string
}

var (
	// Cluster is the scope of cluster-scoped kinds (Namespace, ClusterRole, Node).
	Cluster = Scope{kind: cluster}
	// AllNamespaces is a namespaced kind across every namespace, for List and
	// watches.
	AllNamespaces = Scope{kind: allNamespaces}
)

// Namespaced is one namespace of a namespaced kind. Namespaced("") is
// invalid: [Scope.Check] says so rather than listing every namespace.
func Namespaced(namespace string) Scope {
	return Scope{kind: namespaced, namespace: namespace}
}

// Of returns the scope of an existing object: Namespaced(its namespace), or
// Cluster when it has none.
func Of(obj client.Object) Scope {
	if ns := obj.GetNamespace(); ns != "" {
		return Namespaced(ns)
	}
	return Cluster
}

// Namespace returns the namespace of a Namespaced scope, "" otherwise.
func (s Scope) Namespace() string { return s.namespace }

// IsNamespaced reports whether the scope is for a namespaced kind:
// Namespaced(ns) or AllNamespaces.
func (s Scope) IsNamespaced() bool { return s.kind == namespaced || s.kind == allNamespaces }

// IsZero reports whether the scope is unset.
func (s Scope) IsZero() bool { return s.kind == unset }

// String renders the scope as it is written in Go: Namespaced("ns"),
// Cluster, AllNamespaces.
func (s Scope) String() string {
	switch s.kind {
	case namespaced:
		return "Namespaced(" + strconv.Quote(s.namespace) + ")"
	case cluster:
		return "Cluster"
	case allNamespaces:
		return "AllNamespaces"
	default:
		return "unset scope"
	}
}

// Validate checks the scope on its own, without knowing the kind: it must be
// set, and Namespaced needs a namespace.
func (s Scope) Validate() error {
	switch {
	case s.kind == unset:
		return koperrors.Errorf(koperrors.Invalid, "scope is unset: use scope.Namespaced(ns), scope.Cluster or scope.AllNamespaces")
	case s.kind == namespaced && s.namespace == "":
		return koperrors.Errorf(koperrors.Invalid, `scope Namespaced("") has no namespace: name one, or use scope.AllNamespaces`)
	}
	return nil
}

// Check asks the RESTMapper for gvk's real scope and returns an error of
// Kind Invalid, naming the kind and its scope, when s does not fit it. A kind
// the mapper does not know is also Invalid; the error wraps the mapper's
// NoKindMatchError.
func (s Scope) Check(mapper apimeta.RESTMapper, gvk schema.GroupVersionKind) error {
	if err := s.Validate(); err != nil {
		return err
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return koperrors.WrapKind(koperrors.KindOf(err), fmt.Errorf("kind %s: %w", gvk, err), "check scope", koperrors.Object{})
	}
	kindIsNamespaced := mapping.Scope.Name() == apimeta.RESTScopeNameNamespace
	switch {
	case kindIsNamespaced && !s.IsNamespaced():
		return koperrors.Errorf(koperrors.Invalid, "scope %s given for namespaced kind %s: use scope.Namespaced(ns) or scope.AllNamespaces", s, gvk)
	case !kindIsNamespaced && s.IsNamespaced():
		return koperrors.Errorf(koperrors.Invalid, "scope %s given for cluster-scoped kind %s: use scope.Cluster", s, gvk)
	}
	return nil
}

// ListOptions returns the list options of the scope: InNamespace for
// Namespaced, none for Cluster and AllNamespaces.
func (s Scope) ListOptions() []client.ListOption {
	if s.kind == namespaced {
		return []client.ListOption{client.InNamespace(s.namespace)}
	}
	return nil
}

// ApplyTo sets the scope's namespace on obj. It refuses to overwrite a
// different namespace already set, to put a namespace on an object of a
// Cluster scope, or to apply AllNamespaces (an object lives in one place).
func (s Scope) ApplyTo(obj client.Object) error {
	if err := s.Validate(); err != nil {
		return err
	}
	have := obj.GetNamespace()
	switch s.kind {
	case allNamespaces:
		return koperrors.WrapKind(koperrors.Invalid, fmt.Errorf("scope AllNamespaces cannot place an object: use scope.Namespaced(ns)"), "set scope", koperrors.ObjectOf(obj))
	case cluster:
		if have != "" {
			return koperrors.WrapKind(koperrors.Invalid, fmt.Errorf("metadata.namespace is %q but the scope is Cluster", have), "set scope", koperrors.ObjectOf(obj))
		}
	case namespaced:
		if have != "" && have != s.namespace {
			return koperrors.WrapKind(koperrors.Invalid, fmt.Errorf("metadata.namespace is %q but the scope is %s", have, s), "set scope", koperrors.ObjectOf(obj))
		}
		obj.SetNamespace(s.namespace)
	}
	return nil
}

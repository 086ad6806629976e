package scope

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/names"
)

// kind is what a Scope says; its zero value is "unset".
type kind uint8

const (
	unset kind = iota
	namespaced
	cluster
	allNamespaces
)

// Scope says where an operation acts: one namespace ([Namespaced]),
// cluster-scoped kinds ([Cluster]) or a namespaced kind in every namespace
// ([AllNamespaces]).
//
// Scope is a small comparable value: compare it with ==, use it as a map key,
// copy it freely. Its zero value, Scope{}, is an unset scope: it is not
// "everywhere" and not "the default namespace". [Scope.Validate],
// [Scope.Check] and [Scope.ApplyTo] reject it with an error of Kind Invalid
// ("scope is unset: use scope.Namespaced(ns), scope.Cluster or
// scope.AllNamespaces"), and [Scope.IsZero] reports it, so an option struct
// can tell "not given" from a real scope.
type Scope struct {
	kind      kind
	namespace string
}

var (
	// Cluster is the scope of cluster-scoped kinds, such as Namespace,
	// ClusterRole and Node.
	Cluster = Scope{kind: cluster}
	// AllNamespaces is a namespaced kind across every namespace, for List and
	// watches. It cannot place an object: see [Scope.ApplyTo].
	AllNamespaces = Scope{kind: allNamespaces}
)

// Namespaced is the scope of one namespace, for a namespaced kind.
//
// Namespaced("") is invalid, not a synonym of [AllNamespaces]: an empty
// namespace is most often a variable that was never filled in, and treating
// it as "every namespace" would turn a bug into a cluster-wide operation.
// [Scope.Validate] and [Scope.Check] say so. So is a namespace that is not a
// valid namespace name (a DNS-1123 label).
func Namespaced(namespace string) Scope {
	return Scope{kind: namespaced, namespace: namespace}
}

// Namespace returns the namespace of a Namespaced scope, and "" for
// [Cluster], [AllNamespaces] and the zero Scope.
func (s Scope) Namespace() string { return s.namespace }

// isNamespaced reports whether the scope is for a namespaced kind:
// Namespaced(ns) or [AllNamespaces]. It is false for [Cluster] and the zero
// Scope.
func (s Scope) isNamespaced() bool { return s.kind == namespaced || s.kind == allNamespaces }

// IsZero reports whether the scope is the zero, unset Scope.
func (s Scope) IsZero() bool { return s.kind == unset }

// String renders the scope as it is written in Go, without the package
// name: Namespaced("ns"), Cluster, AllNamespaces, and Scope{} for the zero
// value.
func (s Scope) String() string {
	switch s.kind {
	case namespaced:
		return "Namespaced(" + strconv.Quote(s.namespace) + ")"
	case cluster:
		return "Cluster"
	case allNamespaces:
		return "AllNamespaces"
	default:
		return "Scope{}"
	}
}

// Validate checks the scope on its own, without knowing the kind it will be
// used with: it must be set, and a Namespaced scope needs a valid namespace
// name. Errors are of Kind Invalid. [Scope.Check] calls it first.
func (s Scope) Validate() error {
	switch {
	case s.kind == unset:
		return koperrors.Errorf(koperrors.Invalid, "scope is unset: use scope.Namespaced(ns), scope.Cluster or scope.AllNamespaces")
	case s.kind == namespaced && s.namespace == "":
		return koperrors.Errorf(koperrors.Invalid, `scope Namespaced("") is invalid: name a namespace, or use scope.AllNamespaces for every namespace`)
	case s.kind == namespaced && !names.DNS1123Label(s.namespace):
		if msgs := validation.IsDNS1123Label(s.namespace); len(msgs) > 0 {
			return koperrors.Errorf(koperrors.Invalid, "scope %s is invalid: not a namespace name: %s", s, strings.Join(msgs, "; "))
		}
	}
	return nil
}

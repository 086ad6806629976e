package owners

import "github.com/kopgo/kopgo/scope"

// Options are the options of this package's functions. Each function reads
// the ones its documentation names and ignores the rest.
type Options struct {
	// BlockOwnerDeletion, when set, is a reference's blockOwnerDeletion.
	// Unset: true for a controller reference, absent for an owner
	// reference, and kept as it was when the object already refers to the
	// owner.
	BlockOwnerDeletion *bool
	// OwnerScope says where the owners a mapper returns live; see
	// [OwnerScope].
	OwnerScope scope.Scope
	// ControllerOnly makes [ReferenceMapper] follow the controller
	// reference only.
	ControllerOnly bool
}

// Option is one option of this package's functions.
type Option interface {
	// ApplyToOptions sets the option on o.
	ApplyToOptions(o *Options)
}

// BlockOwnerDeletion sets a reference's blockOwnerDeletion (read by
// [SetController], [SetOwner] and the apply-configuration forms): with true,
// a foreground deletion of the owner waits for this object to go. Setting it
// to true needs permission to update the owner's "finalizers" subresource
// (the OwnerReferencesPermissionEnforcement admission plugin checks it),
// which is why kubebuilder's RBAC markers grant <kind>/finalizers; an
// operator without it passes BlockOwnerDeletion(false).
type BlockOwnerDeletion bool

// ApplyToOptions implements [Option].
func (b BlockOwnerDeletion) ApplyToOptions(o *Options) { o.BlockOwnerDeletion = new(bool(b)) }

// OwnerScope says where the owners a mapper ([LabelMapper],
// [ReferenceMapper]) returns live:
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

// ApplyToOptions implements [Option].
func (s OwnerScope) ApplyToOptions(o *Options) { o.OwnerScope = scope.Scope(s) }

// ControllerOnly makes [ReferenceMapper] follow only the controller
// reference, as controller-runtime's Owns does.
type ControllerOnly bool

// ApplyToOptions implements [Option].
func (c ControllerOnly) ApplyToOptions(o *Options) { o.ControllerOnly = bool(c) }

func options(opts []Option) Options {
	var o Options
	for _, opt := range opts {
		if opt != nil {
			opt.ApplyToOptions(&o)
		}
	}
	return o
}

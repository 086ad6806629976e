package owners

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// ReferenceOptions are the per-call options of the reference builders and
// setters.
type ReferenceOptions struct {
	// BlockOwnerDeletion, when set, is the reference's blockOwnerDeletion.
	// Unset: true for a controller reference, absent for an owner reference.
	BlockOwnerDeletion *bool
}

// ReferenceOption is one per-call option of the reference functions.
type ReferenceOption interface {
	// ApplyToReferenceOptions sets the option on o.
	ApplyToReferenceOptions(o *ReferenceOptions)
}

// BlockOwnerDeletion sets the reference's blockOwnerDeletion: with true, a
// foreground deletion of the owner waits for this object to go. Setting it
// to true needs permission to update the owner's "finalizers" subresource
// (the OwnerReferencesPermissionEnforcement admission plugin checks it), which
// is why kubebuilder's RBAC markers grant <kind>/finalizers.
type BlockOwnerDeletion bool

// ApplyToReferenceOptions implements [ReferenceOption].
func (b BlockOwnerDeletion) ApplyToReferenceOptions(o *ReferenceOptions) {
	v := bool(b)
	o.BlockOwnerDeletion = &v
}

// OwnerReference returns an owner reference to owner: the garbage collector
// deletes the referring object once all its owners are gone. The owner's
// kind comes from scheme; it must have been created (have a UID). Errors
// are of Kind Invalid.
func OwnerReference(owner client.Object, scheme *runtime.Scheme, opts ...ReferenceOption) (metav1.OwnerReference, error) {
	ref, err := reference(owner, scheme, false, opts)
	return ref, koperrors.WrapKind(koperrors.Invalid, err, "owner reference", kopmeta.ObjectRef{})
}

// ControllerReference returns a controller reference to owner: an owner
// reference with controller and blockOwnerDeletion set. An object has at
// most one controller, the one that manages it.
func ControllerReference(owner client.Object, scheme *runtime.Scheme, opts ...ReferenceOption) (metav1.OwnerReference, error) {
	ref, err := reference(owner, scheme, true, opts)
	return ref, koperrors.WrapKind(koperrors.Invalid, err, "controller reference", kopmeta.ObjectRef{})
}

// reference builds the reference; its errors name the owner.
func reference(owner client.Object, scheme *runtime.Scheme, controller bool, opts []ReferenceOption) (metav1.OwnerReference, error) {
	o := ReferenceOptions{}
	for _, opt := range opts {
		if opt != nil {
			opt.ApplyToReferenceOptions(&o)
		}
	}
	gvk, err := apiutil.GVKForObject(owner, scheme)
	if err != nil {
		return metav1.OwnerReference{}, fmt.Errorf("owner %s: %w", kopmeta.RefOf(owner), err)
	}
	if owner.GetUID() == "" {
		return metav1.OwnerReference{}, fmt.Errorf("owner %s has no UID: create it (or read it from the API server) before it can own anything",
			kopmeta.RefOf(owner))
	}
	ref := metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID()}
	if controller {
		ref.Controller, ref.BlockOwnerDeletion = new(true), new(true)
	}
	if o.BlockOwnerDeletion != nil {
		ref.BlockOwnerDeletion = new(*o.BlockOwnerDeletion)
	}
	return ref, nil
}

// SetOwner adds an owner reference to owner on obj, or updates the one obj
// has to the same object (same group, kind and name: a re-created owner's
// new UID replaces the old, as controllerutil does). It refuses, with an
// error of Kind Invalid and obj unchanged, ownership the garbage collector
// would not honour ([Check]) and an owner without a UID.
func SetOwner(owner, obj client.Object, scheme *runtime.Scheme, opts ...ReferenceOption) error {
	return set(owner, obj, scheme, false, opts)
}

// SetController adds a controller reference to owner on obj, or updates the
// one obj has to the same object. Besides what [SetOwner] refuses, it
// refuses a second controller; the error names the controller obj has.
func SetController(owner, obj client.Object, scheme *runtime.Scheme, opts ...ReferenceOption) error {
	return set(owner, obj, scheme, true, opts)
}

func set(owner, obj client.Object, scheme *runtime.Scheme, controller bool, opts []ReferenceOption) error {
	op := "set owner"
	if controller {
		op = "set controller"
	}
	if err := Check(owner, obj); err != nil {
		return koperrors.WrapKind(koperrors.Invalid, err, op, kopmeta.RefOf(obj))
	}
	ref, err := reference(owner, scheme, controller, opts)
	if err != nil {
		return koperrors.WrapKind(koperrors.Invalid, err, op, kopmeta.RefOf(obj))
	}
	if cur := metav1.GetControllerOfNoCopy(obj); controller && cur != nil && !sameObject(*cur, ref) {
		return koperrors.WrapKind(koperrors.Invalid,
			fmt.Errorf("already controlled by %s %s (uid %s): %s %s cannot be a second controller",
				cur.Kind, cur.Name, cur.UID, ref.Kind, ref.Name), op, kopmeta.RefOf(obj))
	}
	refs := append([]metav1.OwnerReference(nil), obj.GetOwnerReferences()...) // never write into the caller's slice
	for i := range refs {
		if sameObject(refs[i], ref) {
			refs[i] = ref
			obj.SetOwnerReferences(refs)
			return nil
		}
	}
	obj.SetOwnerReferences(append(refs, ref))
	return nil
}

// sameObject reports whether two references name the same object, across
// versions and UIDs (an owner deleted and created again is the same owner).
func sameObject(a, b metav1.OwnerReference) bool {
	return a.Kind == b.Kind && a.Name == b.Name && groupOf(a.APIVersion) == groupOf(b.APIVersion)
}

func groupOf(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return "\x00" + apiVersion // never equal to a valid group
	}
	return gv.Group
}

// Check reports ownership that Kubernetes accepts but the garbage collector
// will not honour as intended:
//
//   - an owner in another namespace: owner references do not cross
//     namespaces; the collector looks for the owner in the object's
//     namespace, finds nothing, and deletes the object;
//   - a namespaced owner of a cluster-scoped object: the reference can never
//     be resolved, and the object is never collected;
//   - an object owning itself.
//
// A cluster-scoped owner may own anything. Check judges scope by the
// objects' namespaces (it has no RESTMapper), so set obj's namespace before
// calling it. Errors are of Kind Invalid and name both objects.
func Check(owner, obj client.Object) error {
	ownerNS, objNS := owner.GetNamespace(), obj.GetNamespace()
	switch {
	case owner.GetUID() != "" && owner.GetUID() == obj.GetUID():
		return koperrors.Errorf(koperrors.Invalid, "%s cannot own itself", kopmeta.RefOf(owner))
	case ownerNS == "":
		return nil
	case objNS == "":
		return koperrors.Errorf(koperrors.Invalid,
			"namespaced owner %s cannot own %s, which has no namespace: a cluster-scoped object's owners must be cluster-scoped (if it is namespaced, set its namespace first)",
			kopmeta.RefOf(owner), kopmeta.RefOf(obj))
	case ownerNS != objNS:
		return koperrors.Errorf(koperrors.Invalid,
			"owner %s is in namespace %q, not %q: owner references do not cross namespaces (the garbage collector would find no owner and delete the object)",
			kopmeta.RefOf(owner), ownerNS, objNS)
	}
	return nil
}

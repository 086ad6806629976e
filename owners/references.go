package owners

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
)

// Reference returns an owner reference to owner; with controller true it is
// a controller reference (controller and blockOwnerDeletion set). The owner's
// kind comes from scheme; it must have been created (have a UID).
func Reference(owner client.Object, scheme *runtime.Scheme, controller bool) (metav1.OwnerReference, error) {
	gvk, err := apiutil.GVKForObject(owner, scheme)
	if err != nil {
		return metav1.OwnerReference{}, koperrors.WrapKind(koperrors.Invalid, err, "reference owner", koperrors.ObjectOf(owner))
	}
	if owner.GetUID() == "" {
		return metav1.OwnerReference{}, koperrors.WrapKind(koperrors.Invalid,
			fmt.Errorf("owner has no UID: it must be created before it can own anything"), "reference owner", koperrors.ObjectOf(owner))
	}
	ref := metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID()}
	if controller {
		ref.Controller, ref.BlockOwnerDeletion = new(true), new(true)
	}
	return ref, nil
}

// ApplyConfiguration is [Reference] in server-side apply form.
func ApplyConfiguration(owner client.Object, scheme *runtime.Scheme, controller bool) (*metav1ac.OwnerReferenceApplyConfiguration, error) {
	ref, err := Reference(owner, scheme, controller)
	if err != nil {
		return nil, err
	}
	ac := metav1ac.OwnerReference().WithAPIVersion(ref.APIVersion).WithKind(ref.Kind).WithName(ref.Name).WithUID(ref.UID)
	if controller {
		ac.WithController(true).WithBlockOwnerDeletion(true)
	}
	return ac, nil
}

// SetOwner adds an owner reference to owner on obj (replacing one with the
// same UID). It refuses ownership the garbage collector would not honour.
func SetOwner(owner, obj client.Object, scheme *runtime.Scheme) error {
	return set(owner, obj, scheme, false)
}

// SetController adds a controller reference to owner on obj. Besides what
// [SetOwner] refuses, it refuses a second controller: the error names the
// one obj already has.
func SetController(owner, obj client.Object, scheme *runtime.Scheme) error {
	return set(owner, obj, scheme, true)
}

func set(owner, obj client.Object, scheme *runtime.Scheme, controller bool) error {
	op := "set owner"
	if controller {
		op = "set controller"
	}
	if err := CheckOwnership(owner, obj); err != nil {
		return koperrors.WrapKind(koperrors.Invalid, err, op, koperrors.ObjectOf(obj))
	}
	ref, err := Reference(owner, scheme, controller)
	if err != nil {
		return err
	}
	refs := obj.GetOwnerReferences()
	if controller {
		if cur := metav1.GetControllerOfNoCopy(obj); cur != nil && cur.UID != ref.UID {
			return koperrors.WrapKind(koperrors.Invalid, fmt.Errorf("already controlled by %s %q; %s %q cannot be a second controller",
				cur.Kind, cur.Name, ref.Kind, ref.Name), op, koperrors.ObjectOf(obj))
		}
	}
	for i := range refs {
		if refs[i].UID == ref.UID {
			refs[i] = ref
			obj.SetOwnerReferences(refs)
			return nil
		}
	}
	obj.SetOwnerReferences(append(refs, ref))
	return nil
}

// CheckOwnership reports ownership the garbage collector would not honour:
// a namespaced owner of a cluster-scoped object, or an owner in another
// namespace. (A cluster-scoped owner may own anything.) It judges by the
// objects' namespaces, so set obj's namespace first.
func CheckOwnership(owner, obj client.Object) error {
	ons, ns := owner.GetNamespace(), obj.GetNamespace()
	switch {
	case ons == "":
		return nil
	case ns == "":
		return fmt.Errorf("namespaced owner %s cannot own cluster-scoped %s (or set the object's namespace first)",
			koperrors.ObjectOf(owner), koperrors.ObjectOf(obj))
	case ons != ns:
		return fmt.Errorf("owner %s is in namespace %q and cannot own an object in %q: owner references do not cross namespaces",
			koperrors.ObjectOf(owner), ons, ns)
	}
	return nil
}

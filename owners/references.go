package owners

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/ownerref"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// SetOwner adds an owner reference to owner on obj: the garbage collector
// deletes obj once all its owners are gone. If obj already refers to the
// same object (same group, kind and name), that reference is updated
// instead: a re-created owner's new UID replaces the old, as controllerutil
// does, and a controller reference stays one.
//
// The owner's kind comes from scheme (a nil scheme: from owner's TypeMeta).
// It refuses, with an error of Kind Invalid that names both objects and obj
// unchanged, what the garbage collector would not honour (see the package
// documentation), an owner without a UID (not created yet), and an owner
// whose kind is unknown. Set obj's namespace first: scope is judged by the
// objects' namespaces. Options: [BlockOwnerDeletion].
func SetOwner(owner, obj client.Object, scheme *runtime.Scheme, opts ...Option) error {
	return set(owner, obj, scheme, false, opts)
}

// SetController adds a controller reference to owner on obj (an owner
// reference with controller and blockOwnerDeletion set), or updates the one
// obj has to the same object. An object has at most one controller, the one
// that manages it: besides what [SetOwner] refuses, SetController refuses a
// second controller, naming the controller obj has.
func SetController(owner, obj client.Object, scheme *runtime.Scheme, opts ...Option) error {
	return set(owner, obj, scheme, true, opts)
}

// ControllerReference returns the controller reference to owner that
// [SetController] adds (controller and blockOwnerDeletion set), without an
// object to write it into: for a child authored another way (an
// *unstructured.Unstructured, a template), or to compare with the
// references read. It checks what can be checked without the child: a nil
// owner, one without a UID (not created yet) and one whose kind scheme does
// not know (a nil scheme: owner's TypeMeta) are errors of Kind Invalid.
// Whether the child may carry it (the same namespace, no other controller)
// is for the code that sets it to check, as SetController does.
func ControllerReference(owner client.Object, scheme *runtime.Scheme, opts ...Option) (metav1.OwnerReference, error) {
	return standalone(owner, scheme, true, opts)
}

// OwnerReference returns the owner reference to owner that [SetOwner]
// adds, without an object to write it into, checked as
// [ControllerReference] checks it.
func OwnerReference(owner client.Object, scheme *runtime.Scheme, opts ...Option) (metav1.OwnerReference, error) {
	return standalone(owner, scheme, false, opts)
}

func standalone(owner client.Object, scheme *runtime.Scheme, controller bool, opts []Option) (metav1.OwnerReference, error) {
	op := "owner reference"
	if controller {
		op = "controller reference"
	}
	ref, err := reference(owner, scheme, controller, opts)
	if err == nil && ref.UID == "" {
		err = fmt.Errorf("owner %s has no UID: create it (or read it from the API server) before it can own anything", kopmeta.RefOf(owner))
	}
	if err != nil {
		return metav1.OwnerReference{}, koperrors.WrapKind(koperrors.Invalid, err, op, kopmeta.ObjectRef{})
	}
	return ref, nil
}

var refsPath = field.NewPath("metadata", "ownerReferences")

func set(owner, obj client.Object, scheme *runtime.Scheme, controller bool, opts []Option) error {
	op := "set owner"
	if controller {
		op = "set controller"
	}
	ref, err := reference(owner, scheme, controller, opts)
	if err == nil {
		err = ownerref.Attach(obj, ref, owner.GetNamespace())
	}
	if err != nil {
		return koperrors.WrapKind(koperrors.Invalid, err, op, kopmeta.RefOf(obj))
	}
	return nil
}

// reference builds the reference to owner; its errors name the owner.
func reference(owner client.Object, scheme *runtime.Scheme, controller bool, opts []Option) (metav1.OwnerReference, error) {
	if ownerref.IsNil(owner) {
		return metav1.OwnerReference{}, errors.New("the owner is nil")
	}
	gvk, err := ownerref.KindOf(owner, scheme)
	if err != nil {
		return metav1.OwnerReference{}, fmt.Errorf("owner %s: %w", kopmeta.RefOf(owner), err)
	}
	ref := ownerref.For(owner, gvk, controller)
	if o := options(opts); o.BlockOwnerDeletion != nil {
		ref.BlockOwnerDeletion = new(*o.BlockOwnerDeletion)
	}
	return ref, nil
}

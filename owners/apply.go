package owners

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/ownerref"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// OwnerApplyConfiguration is [SetOwner] in server-side apply form: it
// returns the reference for child's WithOwnerReferences, checked as
// [SetOwner] checks it, from child's namespace. child is the apply
// configuration the reference goes into, the value client.Apply takes:
// every client-go apply configuration (corev1ac.ConfigMap(name, ns), ...)
// and those applyconfiguration-gen writes for custom resources qualify (the
// package reads their GetKind, GetName and GetNamespace).
//
//	cm := corev1ac.ConfigMap("web-config", "shop").WithData(data)
//	ref, err := owners.OwnerApplyConfiguration(webapp, cm, scheme)
//	...
//	cm.WithOwnerReferences(ref)
func OwnerApplyConfiguration(owner client.Object, child runtime.ApplyConfiguration, scheme *runtime.Scheme, opts ...Option) (*metav1ac.OwnerReferenceApplyConfiguration, error) {
	return applyConfiguration(owner, child, scheme, false, opts)
}

// ControllerApplyConfiguration is [SetController] in server-side apply
// form, like [OwnerApplyConfiguration]. It cannot refuse a second
// controller: an apply configuration does not show the references the
// object already has (the API server refuses a second controller when the
// apply is sent).
func ControllerApplyConfiguration(owner client.Object, child runtime.ApplyConfiguration, scheme *runtime.Scheme, opts ...Option) (*metav1ac.OwnerReferenceApplyConfiguration, error) {
	return applyConfiguration(owner, child, scheme, true, opts)
}

// applyObject is what the apply form reads of the apply configuration the
// reference goes into.
type applyObject interface {
	GetKind() *string
	GetName() *string
	GetNamespace() *string
}

func applyConfiguration(owner client.Object, child runtime.ApplyConfiguration, scheme *runtime.Scheme, controller bool, opts []Option) (*metav1ac.OwnerReferenceApplyConfiguration, error) {
	op := "owner reference"
	if controller {
		op = "controller reference"
	}
	ac, ok := child.(applyObject)
	if !ok || ownerref.IsNil(child) {
		return nil, koperrors.WrapKind(koperrors.Invalid,
			fmt.Errorf("the child %T is not a generated apply configuration (it lacks GetKind, GetName or GetNamespace)", child), op, kopmeta.ObjectRef{})
	}
	target := &metav1.PartialObjectMetadata{}
	target.Kind, target.Name, target.Namespace = deref(ac.GetKind()), deref(ac.GetName()), deref(ac.GetNamespace())
	ref, err := reference(owner, scheme, controller, opts)
	if err != nil {
		return nil, koperrors.WrapKind(koperrors.Invalid, err, op, kopmeta.RefOf(target))
	}
	if err := ownerref.Joined(ownerref.Check(refsPath.Index(0), ref, owner.GetNamespace(), ownerref.Child{Namespace: target.Namespace})); err != nil {
		return nil, koperrors.WrapKind(koperrors.Invalid, err, op, kopmeta.RefOf(target))
	}
	out := metav1ac.OwnerReference().WithAPIVersion(ref.APIVersion).WithKind(ref.Kind).WithName(ref.Name).WithUID(ref.UID)
	if ref.Controller != nil {
		out.WithController(*ref.Controller)
	}
	if ref.BlockOwnerDeletion != nil {
		out.WithBlockOwnerDeletion(*ref.BlockOwnerDeletion)
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

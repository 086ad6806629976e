package owners

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// ApplyObject is what the apply-configuration helpers read of the object to
// be owned: its kind, name and namespace. Every client-go apply
// configuration (corev1ac.ConfigMap(name, ns), ...) and those that
// applyconfiguration-gen writes for custom resources have these getters.
type ApplyObject interface {
	GetKind() *string
	GetName() *string
	GetNamespace() *string
}

// OwnerApplyConfiguration is [OwnerReference] in server-side apply form,
// for child's WithOwnerReferences. It checks the ownership as [SetOwner]
// does ([Check]), from child's namespace.
//
//	cm := corev1ac.ConfigMap("web-config", "shop").WithData(data)
//	ref, err := owners.OwnerApplyConfiguration(webapp, cm, scheme)
//	...
//	cm.WithOwnerReferences(ref)
func OwnerApplyConfiguration(owner client.Object, child ApplyObject, scheme *runtime.Scheme, opts ...ReferenceOption) (*metav1ac.OwnerReferenceApplyConfiguration, error) {
	return applyConfiguration(owner, child, scheme, false, opts)
}

// ControllerApplyConfiguration is [ControllerReference] in server-side
// apply form, for child's WithOwnerReferences. It checks the ownership as
// [SetController] does, except for a second controller: an apply
// configuration does not show the references the object already has (the
// API server refuses a second controller when the apply is sent).
func ControllerApplyConfiguration(owner client.Object, child ApplyObject, scheme *runtime.Scheme, opts ...ReferenceOption) (*metav1ac.OwnerReferenceApplyConfiguration, error) {
	return applyConfiguration(owner, child, scheme, true, opts)
}

func applyConfiguration(owner client.Object, child ApplyObject, scheme *runtime.Scheme, controller bool, opts []ReferenceOption) (*metav1ac.OwnerReferenceApplyConfiguration, error) {
	op := "owner reference"
	if controller {
		op = "controller reference"
	}
	target := applyObject(child)
	if err := Check(owner, target); err != nil {
		return nil, koperrors.WrapKind(koperrors.Invalid, err, op, kopmeta.RefOf(target))
	}
	ref, err := reference(owner, scheme, controller, opts)
	if err != nil {
		return nil, koperrors.WrapKind(koperrors.Invalid, err, op, kopmeta.RefOf(target))
	}
	ac := metav1ac.OwnerReference().WithAPIVersion(ref.APIVersion).WithKind(ref.Kind).WithName(ref.Name).WithUID(ref.UID)
	if ref.Controller != nil {
		ac.WithController(*ref.Controller)
	}
	if ref.BlockOwnerDeletion != nil {
		ac.WithBlockOwnerDeletion(*ref.BlockOwnerDeletion)
	}
	return ac, nil
}

// applyObject turns an apply configuration's identity into an object for
// [Check] and error messages.
func applyObject(child ApplyObject) *metav1.PartialObjectMetadata {
	deref := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	obj := &metav1.PartialObjectMetadata{}
	if child != nil {
		obj.Kind = deref(child.GetKind())
		obj.Name = deref(child.GetName())
		obj.Namespace = deref(child.GetNamespace())
	}
	return obj
}

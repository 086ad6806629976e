package owners

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// LabelMapper maps a watched object to the object its label names in the
// same namespace: for a secondary watch whose objects are not owned by
// reference (another namespace's ConfigMap can't be), or cannot be (objects
// made by someone else). An object without the label maps to nothing.
//
//	bldr.Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(owners.LabelMapper("example.com/webapp")))
func LabelMapper(label string) handler.MapFunc {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		name := obj.GetLabels()[label]
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
	}
}

// SetOwnerLabel labels obj with owner's name under label, for [LabelMapper].
func SetOwnerLabel(obj client.Object, label string, owner client.Object) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[label] = owner.GetName()
	obj.SetLabels(labels)
}

// ReferenceMapper maps a watched object to its owners of kind ownerKind
// found in its owner references (only its controller with controllerOnly).
// Owners are in the object's namespace, or cluster-scoped when the object
// is.
func ReferenceMapper(ownerKind schema.GroupKind, controllerOnly bool) handler.MapFunc {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		var reqs []reconcile.Request
		for _, ref := range obj.GetOwnerReferences() {
			if controllerOnly && (ref.Controller == nil || !*ref.Controller) {
				continue
			}
			if ownerGroupKind(ref) != ownerKind {
				continue
			}
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}})
		}
		return reqs
	}
}

func ownerGroupKind(ref metav1.OwnerReference) schema.GroupKind {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupKind{}
	}
	return schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
}

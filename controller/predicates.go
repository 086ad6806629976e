package controller

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// ignoreStatusOnly drops update events of the primary object that change
// nothing but its status (and what the server maintains with it:
// resourceVersion, managedFields). The reconciler's own status write would
// otherwise come back as one more reconcile per change, an idle one at best
// and, for a Stalled object, a second terminal failure in the logs
// (java-operator-sdk is generation-aware by default for the same reason).
//
// "Status only" is knowable only from metadata.generation, which the server
// moves on every change of the object's desired state. A kind without
// generation (0 on both sides: ConfigMap, Secret, Service and other
// built-in kinds without a spec/status split) has every update kept, since
// its data changes leave generation alone. A custom resource without a
// status subresource has generation moved by any change outside metadata,
// status included, so each such update is kept too.
//
// Also kept: a changed generation (spec), labels, annotations, finalizers,
// owner references or deletion timestamp, and the informer's periodic
// resync (an update whose resourceVersion did not move).
func ignoreStatusOnly() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		if o == nil || n == nil {
			return true
		}
		return o.GetGeneration() == 0 && n.GetGeneration() == 0 ||
			o.GetResourceVersion() == n.GetResourceVersion() ||
			o.GetGeneration() != n.GetGeneration() ||
			!maps.Equal(o.GetLabels(), n.GetLabels()) ||
			!maps.Equal(o.GetAnnotations(), n.GetAnnotations()) ||
			!slices.Equal(o.GetFinalizers(), n.GetFinalizers()) ||
			!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) ||
			!equality.Semantic.DeepEqual(o.GetOwnerReferences(), n.GetOwnerReferences())
	}}
}

// deletesOnly keeps delete events only: the loop's delete handler (which
// catches objects deleted before their cleanup ran) needs nothing else.
func deletesOnly() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
	}
}

// Package owners builds owner and controller references the garbage
// collector will honour, maps watched objects back to their owners, and
// names objects with a comparable [ObjectRef] and sets of them.
//
//	if err := owners.SetController(webapp, deployment, scheme); err != nil {
//		return err // e.g. "already controlled by WebApp other (uid …)"
//	}
//
//	bldr.Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(
//		owners.LabelMapper("example.com/webapp")))
//
// # References
//
// [SetController] and [SetOwner] add a reference to a typed object;
// [ControllerReference] and [OwnerReference] return one;
// [ControllerApplyConfiguration] and [OwnerApplyConfiguration] return one in
// server-side apply form, for an apply configuration's WithOwnerReferences.
// They refuse, with errors of Kind Invalid that name both objects, what the
// API server accepts but the garbage collector will not honour ([Check]):
//
//   - an owner in another namespace: the collector looks for it in the
//     child's namespace, finds nothing and deletes the child;
//   - a namespaced owner of a cluster-scoped object: never resolved, the
//     object is never collected;
//   - an owner without a UID (not created yet), which the server refuses
//     only when the child is written;
//   - a second controller: the error names the controller the object has,
//     where the server would answer with a generic 422 at write time.
//
// Compared with controller-runtime's controllerutil.SetControllerReference:
// the same rules plus the UID and self-ownership checks, errors that name
// both objects and say what the collector would do, koperrors Kinds to
// branch on, an object left unchanged on error, and the apply form. Like
// controllerutil it recognises an existing reference to the same owner by
// group, kind and name, so an owner deleted and created again takes its
// child over (its new UID replaces the old) instead of being refused.
//
// # Mapping watched objects to owners
//
// [ReferenceMapper] follows owner references to owners of one kind (all of
// them, or the controller only with [ControllerOnly]). [LabelMapper] follows
// a label that names the owner, for objects that cannot carry an owner
// reference: made by someone else, or in another namespace than their
// owner; [SetOwnerLabel] and [OwnerLabel] write that label. Both mappers
// return controller-runtime's handler.MapFunc ([TypedLabelMapper] and
// [TypedReferenceMapper] for typed watches), and take [OwnerScope] for
// owners that are cluster-scoped (scope.Cluster), or, for the label mapper,
// all in one namespace (scope.Namespaced(ns)).
//
// The label key is the operator's own ("example.com/webapp"); there is no
// default key, as two operators sharing one would reconcile each other's
// objects. A label value holds at most 63 characters: [SetOwnerLabel]
// refuses an owner whose name is longer.
//
// Objects are named with kopmeta.ObjectRef (package
// github.com/kopgo/kopgo/meta), kopgo's one identity type.
package owners

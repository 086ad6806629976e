// Package owners sets owner and controller references the garbage
// collector will honour, and maps watched objects back to their owners.
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
// [ControllerApplyConfiguration] and [OwnerApplyConfiguration] return one in
// server-side apply form, for an apply configuration's WithOwnerReferences;
// [ControllerReference] and [OwnerReference] return one without a child to
// write it into (an unstructured child, a comparison), checked as far as
// the owner alone allows.
// The owner's kind comes from a runtime.Scheme, as in controllerutil (the
// manager's, or reconciler.Env's); kopmeta.Builder's Owner and ControlledBy
// take the same inputs and apply the same rules. They refuse, with errors of
// Kind Invalid that name both objects, what the API server accepts but the
// garbage collector will not honour:
//
//   - an owner in another namespace: the collector looks for it in the
//     child's namespace, finds nothing and deletes the child;
//   - a namespaced owner of a cluster-scoped object: never resolved, the
//     object is never collected;
//   - an owner without a UID (not created yet), which the server refuses
//     only when the child is written;
//   - an object owning itself;
//   - a second controller: the error names the controller the object has,
//     where the server would answer with a generic 422 at write time.
//
// Scope is judged by the objects' namespaces (there is no RESTMapper
// here), so set the child's namespace first. To check without changing an
// object, set the reference on a copy.
//
// Compared with controller-runtime's controllerutil.SetControllerReference:
// the same rules plus the UID and self-ownership checks, errors that name
// both objects and say what the collector would do, koperrors Kinds to
// branch on, an object left unchanged on error, and the apply form. Like
// controllerutil it recognises an existing reference to the same owner by
// group, kind and name, so an owner deleted and created again takes its
// child over (its new UID replaces the old) instead of being refused;
// unlike it, setting an owner again never demotes its controller reference.
// [BlockOwnerDeletion](false) makes a reference that does not block a
// foreground deletion of the owner (for an operator without RBAC on the
// owner's finalizers subresource).
//
// # Mapping watched objects to owners
//
// [ReferenceMapper] follows owner references to owners of one kind (all of
// them, or the controller only with [ControllerOnly]). [LabelMapper] follows
// a label that names the owner, for objects that cannot carry an owner
// reference: made by someone else, or in another namespace than their
// owner; [SetOwnerLabel] and [OwnerLabel] write that label. Both mappers
// return controller-runtime's handler.MapFunc (a typed watch wraps one in a
// one-line func), and take [OwnerScope] for owners that are cluster-scoped
// (scope.Cluster), or, for the label mapper, all in one namespace
// (scope.Namespaced(ns)).
//
// The label key is the operator's own ("example.com/webapp"); there is no
// default key, as two operators sharing one would reconcile each other's
// objects. A label value holds at most 63 characters: [SetOwnerLabel]
// refuses an owner whose name is longer.
//
// # Options
//
// The reference functions and the mappers take the same [Option] values,
// controller-runtime style; each reads those its documentation names:
// [BlockOwnerDeletion] for references, [OwnerScope] and [ControllerOnly]
// for mappers.
//
// Objects are named with kopmeta.ObjectRef (package
// github.com/kopgo/kopgo/meta), kopgo's one identity type.
package owners

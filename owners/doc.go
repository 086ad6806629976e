// Package owners builds owner and controller references that the garbage
// collector will honour, maps watched objects back to their owners, and
// gives a comparable reference type with sets.
//
// # References
//
// [SetController] and [SetOwner] add a reference to an object, refusing what
// Kubernetes would accept but never act on, with errors that name both
// objects: an owner in another namespace, a namespaced owner of a
// cluster-scoped object, an owner not yet created (no UID), and a second
// controller. [Reference] and [ApplyConfiguration] return the reference in
// typed and server-side apply form.
//
// # Mapping watched objects to owners
//
// [ReferenceMapper] follows owner references to owners of one kind;
// [LabelMapper] follows a label that names the owner in the same namespace,
// for objects that cannot carry an owner reference (made by someone else, or
// watched across namespaces). [SetOwnerLabel] sets that label. Both return
// controller-runtime's handler.MapFunc.
//
// # ObjectRef and RefSet
//
// [ObjectRef] identifies an object by group, kind, namespace and name (not
// version: the same object served at v1 and v2 is one object); [RefSet] is a
// set of them with Difference and Union, for inventories such as "children a
// parent wants" against "children that exist".
package owners

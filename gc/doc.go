// Package gc deletes the objects an operator made and no longer needs, and
// never anything else. It is kopgo's one place that deletes: many objects
// chosen by a label and a predicate, a parent's unwanted children, or one
// object named by kind, namespace and name.
//
//	// Orphans: children labelled as ours whose owner is gone.
//	res, err := gc.Collect(ctx, c, appsv1.SchemeGroupVersion.WithKind("Deployment"),
//		scope.Namespaced(ns), labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": "my-operator"}),
//		gc.OwnerExists(c), gc.OwnedFinalizers{"example.com/cleanup"})
//
//	// Inventory: the children one parent still wants, and no others.
//	res, err := gc.Prune(ctx, c, webapp, childLabels, kinds, desired)
//
//	// Objects already read and judged (a controller's observed children).
//	res, err := gc.Delete(ctx, c, stale, gc.OwnedFinalizers{"example.com/cleanup"})
//
//	// One object by name; already gone is no error (res.Deleted is empty).
//	res, err := gc.Delete(ctx, c, []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "old"}}},
//		client.Preconditions{ResourceVersion: &rv}, client.GracePeriodSeconds(0))
//
// # Options
//
// Every function takes controller-runtime's delete options, passed as they
// are: client.PropagationPolicy, client.GracePeriodSeconds,
// client.Preconditions and client.DryRunAll (which reports what would be
// deleted and deletes nothing). kopgo's own are [OwnedFinalizers] and
// [Metrics], in the same interface.
//
// # What it will not do
//
//   - Judge objects outside a label selector: an empty selector is refused.
//   - Delete an object it was not asked about: [Prune] keeps everything not
//     controlled by the parent (by UID), even with the right label.
//   - Delete a re-created object: every delete of an object it read carries
//     that object's UID as a precondition, so an object deleted and created
//     again under the same name meanwhile survives.
//   - Take a namespaced object without a namespace for one that is "already
//     gone": an object's namespace is checked against its kind's scope
//     (scope.Of) before anything is sent.
//   - Remove a finalizer it does not own: objects stuck in deletion lose only
//     the finalizers named in [OwnedFinalizers], through finalizers.RemoveAll:
//     a JSON patch that tests each entry it removes at its index, so a
//     concurrent finalizer writer is never overwritten. Objects that still wait on others are reported in
//     [Result.Stuck], not hidden.
//
// A property test generates random mixes of owned, orphaned, unlabelled and
// finalizer-carrying objects and checks each of these against the real API
// server.
//
// # Cost
//
// Objects are listed as metadata only (PartialObjectMetadataList): no specs
// cross the wire. Lists and owner lookups go through the client given, so a
// manager's cached client answers from its cache (a metadata informer) and
// only deletes and finalizer patches reach the API server. That cache is a
// second one next to any typed informer of the same kind; a caller that
// already holds the objects (reconciler.Sync holds its observed children)
// passes them to [Delete], which lists nothing.
//
// Deletion propagates in the background by default (client.PropagationPolicy
// changes it): the object goes at once and the cluster's garbage collector removes
// its own dependents, as a Deployment's ReplicaSets and Pods.
package gc

// Package status maintains an object's conditions in kstatus' vocabulary
// (Ready, Reconciling, Stalled, which Flux, Argo CD and
// `kubectl wait --for=condition=Ready` understand) and writes the status
// subresource only when it changed.
//
// # Conditions
//
// Conditions are metav1.Condition, set through apimachinery's
// SetStatusCondition: lastTransitionTime moves only when a condition's status
// moves, observedGeneration is stamped with the object's generation, and
// conditions keep a fixed order (Ready, Reconciling, Stalled, then by type)
// so that identical states serialize identically. A CRD type opts in with two
// one-line methods ([Getter], [Setter]).
//
//	status.MarkReconciling(app, "Progressing", "2/3 replicas ready")
//	status.MarkReady(app, "Deployed", "3/3 replicas ready")
//	status.MarkStalled(app, "InvalidSpec", "spec.port 70000: must be at most 65535")
//	status.SetError(app, err) // Ready=False, reason from the error's Kind; Stalled if terminal
//
// # Writing status
//
// A [Patcher] snapshots the status when the object is read and, in
// [Patcher.Patch], sends one server-side apply of the whole status (scalars
// and conditions together, so neither drops the other) or nothing at all
// when the status is unchanged: no request, no new resourceVersion, no watch
// event, hence no reconcile loop fed by its own writes. This needs no GET;
// the object as read is the comparison. It works the same in a kopgo
// reconciler and in a plain controller-runtime one.
//
// Apply rather than merge patch: the field owner owns exactly the status it
// sends, so a condition dropped from one write is removed from the object
// (declare conditions as a list map keyed by type in the CRD, as
// controller-gen's +listType=map +listMapKey=type does), and fields other
// controllers own in status are left alone.
//
// # Generations
//
// [IsCurrent] tells whether the object's generation was already handled
// (observedGeneration, or the Ready condition's); [IsTrue] and [IsReady] ignore
// conditions observed for an older generation.
package status

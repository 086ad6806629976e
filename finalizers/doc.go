// Package finalizers adds and removes one controller's finalizer without ever
// dropping another controller's, in one request when something changes and
// none when nothing does.
//
//	const cleanup = "example.com/cleanup"
//
//	if obj.GetDeletionTimestamp().IsZero() {
//		_, err := finalizers.Add(ctx, c, obj, cleanup)
//		...
//	} else {
//		// clean up, then:
//		_, err := finalizers.Remove(ctx, c, obj, cleanup)
//	}
//
// Names must be domain-qualified ("example.com/cleanup"): the API server
// accepts a bare word with only a warning, and two controllers that pick the
// same word would remove each other's finalizer.
//
// # How concurrent writers stay safe
//
// Each change is a JSON patch of two operations: test that
// metadata.finalizers is still exactly the list this caller read, then set
// the new list. If another writer changed the finalizers in between, the test
// fails (422), the object is read again and the change recomputed, with a
// short jittered wait, up to 20 times. Writers of any other field (spec,
// status, labels) never make it retry.
//
// Alternatives considered:
//   - A merge patch with a resourceVersion precondition (controllerutil's
//     usual way) retries on every unrelated change, status writes included.
//   - Server-side apply with one field manager per finalizer cannot remove a
//     finalizer another manager owns, as one set when the object was created.
//   - A strategic merge patch deduplicates, but custom resources do not
//     support it.
//
// # Requests
//
// Measured against the real API server: Add or Remove when nothing changes:
// 0 requests; when something changes: 1; with a stale object in hand: 3
// (the failed patch, a read, the patch). Remove on an object that is gone is
// a success, as is removing the last finalizer of an object being deleted
// (the object goes away).
package finalizers

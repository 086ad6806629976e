// Package finalizers adds and removes one controller's finalizer without ever
// dropping another controller's: no request when there is nothing to do, one
// when there is, and two more for each race lost to another writer.
//
//	const cleanup = "example.com/cleanup"
//
//	if !kopmeta.IsBeingDeleted(obj) {
//		if _, err := finalizers.Add(ctx, c, obj, cleanup); err != nil {
//			return err
//		}
//		// ... reconcile
//	} else if finalizers.Has(obj, cleanup) {
//		// ... clean up, then:
//		if _, err := finalizers.Remove(ctx, c, obj, cleanup); err != nil {
//			return err
//		}
//	}
//
// [Add] and [Remove] judge by the object in hand first (usually from a
// cache), and update it with the server's response. Any client.Client works,
// cached or not; only its Patch method is used.
//
// # Names
//
// [Add] takes a domain-qualified name ("example.com/cleanup") and refuses
// anything else with an error of Kind Invalid that names the object and the
// value: the API server accepts a bare word with a warning only, and two
// controllers that pick the same word remove each other's finalizer.
// [Remove] also takes a bare word, so a controller can retire a finalizer
// from before it followed the convention.
//
// # How concurrent writers stay safe
//
// Every change is one JSON patch (RFC 6902) whose "test" operations make it
// conditional on exactly what the change relies on:
//
//   - [Add] tests that metadata.finalizers is still the list it read and
//     sets that list plus its name. What it writes is a superset of what it
//     replaces, so no entry is lost, and the name is never listed twice.
//   - [Remove] tests, for each entry it removes, that the entry at that index
//     still is its name, then removes that index (from the last to the
//     first). Nothing else in the list is touched; other writers may add
//     entries at the end or change any other field meanwhile without making
//     it fail, only a shift of its own entry does.
//   - Both first test metadata.uid, so that an object deleted and created
//     again under the same name is never changed in the old one's stead
//     (its finalizer is not ours to remove: our cleanup ran for the other).
//
// The API server applies a patch to the object as stored, inside the same
// compare-and-swap on resourceVersion as the write (it re-applies the patch
// if the object moved in between), so the tests and the write are atomic:
// when they pass, nobody's entry can have been lost. When a test fails the
// server answers 422 and changes nothing; the object is then read again,
// the change recomputed and sent again, at most 50 times per call.
//
// The re-read is a patch of the UID test alone. It changes nothing (the
// server writes nothing and the resourceVersion stays) and answers with the
// object as stored: unlike a Get through a manager's client it is never a
// cache's older copy, which under contention loses the next race too. It
// also tells a lost race (the object moved) from a patch refused for a
// reason of its own (it did not: that error is returned), a replaced object
// (the UID test fails) and a gone one (404).
//
// # Alternatives rejected
//
//   - A merge patch with a resourceVersion precondition
//     (client.MergeFromWithOptimisticLock, controllerutil's usual way):
//     same cost when nothing races, but it loses the race to every write of
//     any field, a status update or another controller's label included,
//     each time costing two requests more.
//   - Server-side apply with one field manager per finalizer: one request
//     and no races, since finalizers is a set in SSA. But an entry that
//     another manager also owns stays when we stop applying it: measured, a
//     finalizer listed by whoever created the object, or added with an
//     Update (controllerutil, kubectl edit, this controller's previous
//     version) is never removed this way, and the object never goes. An
//     apply to an object that is gone also creates it, unless the UID is
//     sent as a precondition.
//   - A strategic merge patch ($deleteFromPrimitiveList) needs no test, but
//     custom resources, the usual owners of a finalizer, do not support it.
//
// # Requests
//
// Measured against the real API server (TestRequestCounts, TestCachedClient):
//
//	nothing to do (present for Add, absent for Remove)       0
//	a change                                                  1
//	  also when other fields, or for Remove other entries
//	  after ours, changed since the object was read           1
//	a lost race (the finalizers moved under Add, or ours
//	  moved under Remove): refused patch, re-read, patch      3
//	the change was made by someone else meanwhile             2
//
// Under a deliberately hostile load (TestConcurrentWritersNeverLoseFinalizers:
// three writers toggling finalizers on one object as fast as they can, and a
// fourth changing a label) 301 changes took about 1.5 requests each.
//
// # Deletion
//
// [Remove] on an object that is gone is a success that changed nothing, as
// is removing the last finalizer of an object being deleted (the object goes
// away). [Add] on an object being deleted fails, as the API server accepts no
// new finalizers then: with Kind Invalid when the object in hand says so
// (and no request), with Kind Conflict when only the server knew.
//
// # Tracing
//
// Each call past name validation opens a "finalizers" span under the
// span in its context (see the observability package), which costs nothing
// without a tracer provider.
package finalizers

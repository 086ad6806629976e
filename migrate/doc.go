// Package migrate is the upgrade path of a CRD's stored objects: before an
// old version is removed from a CustomResourceDefinition, every object is
// rewritten at the current storage version, managedFields entries that
// name another version are rewritten to name the storage version, and the
// CRD's status.storedVersions is pruned to the storage version, only once
// all of that is checked.
//
//	rep, err := migrate.Run(ctx, c, "widgets.example.com", migrate.Options{})
//	fmt.Println(rep) // CRD widgets.example.com to v2 by Write: 10000 objects, 10000 rewritten, ...
//
// # The upgrade, in order
//
// 1. Add the new version to the CRD as the storage version, the old one
// still served (the operator's new release, which reads and writes the new
// version). 2. Run. 3. Stop serving the old version (served: false): no
// client can write at it any more, and objects stay convertible to it. 4.
// Run again: it rewrites only what was written at the old version
// meanwhile. 5. Remove the old version from spec.versions; the API server
// refuses while storedVersions names it. testkit.Upgrade walks the same
// path in tests.
//
// # Rewriting the stored objects
//
// Etcd holds each custom resource as JSON at the version that was the
// storage version when it was last written. Writing an object back
// unchanged migrates it: the API server decodes it, encodes it at the
// current storage version and compares the bytes with what etcd holds
// (k8s.io/apiserver's etcd3 store, GuaranteedUpdate); only if they differ
// (another apiVersion, managedFields rewritten) is etcd written and the
// resourceVersion moved. So an unchanged write of an object already at the
// storage version costs a request and stores nothing, and the
// resourceVersion of the answer says which case it was ([Report]'s
// Rewritten and Current). The package's tests show both on etcd.
//
// [Write] does this itself: a paged list at the storage version, and an
// update of each object with the resourceVersion it was listed with
// (Options.Workers at a time); a conflict reads the object again, a
// deleted object is counted and skipped. [StorageVersionMigration] leaves
// it to the controller manager's storage version migrator
// (storagemigration.k8s.io/v1, GA and on by default in Kubernetes 1.37;
// the controller needs the garbage collector, whose cache it lists, and
// the client-go gates InformerResourceVersion and InOrderInformers, both
// on): it records a resourceVersion of the resource as a checkpoint, and
// patches every object of the garbage collector's cache at or below it
// with an empty merge patch that carries the object's resourceVersion,
// which is the same unchanged write. The migrator ignores managedFields,
// so Run rewrites the objects whose entries name another version itself
// first. [Auto] (the default) uses the migrator when the API server serves
// its API, and writes the objects itself if no migrator takes the
// migration up within Options.MigratorTimeout.
//
// # managedFields of removed versions
//
// Each managedFields entry names the version its fields are expressed in.
// On a server-side apply the API server converts the object to the version
// of every manager's entry to compare fields there; once that version is
// gone from the CRD, the conversion fails ("request to convert CR to an
// invalid group/version") and every apply of the object fails
// (kubernetes#111937, open since 2022; an update does not fail, it keeps
// the old managedFields and logs). Two ways out, and what each loses:
//
//   - Dropping the entries loses ownership: the next apply of their
//     manager takes the fields again, but the fields it stopped applying
//     are no longer removed (nobody owns them), conflicts with other
//     writers of those fields go unnoticed, and an object whose every
//     entry is dropped is handed whole to the next writer.
//   - Rewriting an entry's apiVersion to the storage version keeps the
//     ownership; it loses nothing when the versions share their fields'
//     paths, which None conversion requires. A field renamed between the
//     versions would be owned under its old name, a path the storage
//     version does not have: [Rename] moves it (a spec.size owned at v1
//     becomes spec.replicas at v2). Renames the caller does not list leave
//     ownership of the old path behind, harmless but useless: the field is
//     unowned at its new name until its manager applies again.
//
// Run rewrites ([RewriteManagedFields]): every entry of the CRD's group
// whose version is not the storage version is made to name the storage
// version; an update entry that then has the same manager and subresource
// as one already at the storage version is merged into it (union of the
// fields, later time), since the API server refuses two. The write sends
// the rewritten entries with the object, and Run checks the answer: the
// API server keeps the old entries silently when it cannot use the sent
// ones. This also repairs objects after the fact, when a version was
// dropped already. Options.SkipManagedFields turns it off, to show the
// failure.
//
// # Pruning storedVersions, and racing writes
//
// Every write after the CRD's switch goes to the new storage version,
// except from an API server that has not seen the switch yet (in a
// cluster of several, each learns it from its own watch) and an object
// that races the migration with such a write escapes a single pass. So
// after the first pass Run makes check passes: a paged list of the
// objects' metadata; an object whose resourceVersion is not the one Run's
// own write left (or, with the migrator, is above its checkpoint), or
// whose managedFields name another version, was written by someone else
// since, or created since: it is written again (which stores nothing if it
// is at the storage version). Run prunes only after a pass that found
// none, and returns [ErrNotSettled] after Options.MaxPasses passes that
// kept finding some. It prunes with an update of the CRD's status that
// carries the resourceVersion just read, only if metadata.generation is
// still the one it started with (otherwise [ErrCRDChanged]: the storage
// version may have moved). A write at the old version between the last
// pass and the prune remains possible in principle; stopping to serve the
// old version before the second Run (step 3 above) closes it for clients,
// and Run's return is the point after which the version may go.
//
// With the migrator the check passes are weaker. Its own writes move
// every object's resourceVersion above its checkpoint and leave no trace
// (an empty patch adds no managedFields entry), so Run cannot tell them
// from another writer's: it trusts every object whose resourceVersion is
// not above the StorageVersionMigration's own as read succeeded (the same
// etcd revision sequence), as the migrator trusts everything written
// after its checkpoint, and checks only what changed after that. In
// Kubernetes 1.37 the migrator also prunes storedVersions itself when a
// migration succeeds and the CRD's generation did not change (the
// StorageMigrating condition it sets on the CRD), before Run's check
// passes. So where a lagging API server may write at the old version
// during the migration (several API servers, a storage version changed
// moments before), use [Write]: it checks each object.
//
// # Crashes and re-runs
//
// Run keeps no state outside the cluster: what is migrated is what etcd
// holds. Killed at any point (the tests SIGKILL a migration process),
// storedVersions is not pruned yet; Run again writes every object again,
// and the ones already migrated store nothing ([Report].Current). With the
// migrator, the StorageVersionMigration is named after the CRD, the
// storage version and the CRD's generation, so a second Run finds the
// first one's (a failed one is deleted and created again).
//
// # Cost
//
// Write sends one update per object in the first pass, plus a metadata
// list per check pass and one update per object changed meanwhile. The
// figures of the package's tests (10,000 objects on two cores) are in the
// changelog of the change that added the package.
package migrate

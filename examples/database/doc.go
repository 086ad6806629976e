// Package database is kopgo's Database example operator: declarative
// children with lifecycles beyond "keep in sync", on reconciler.Sync. A
// Database custom resource (package
// [github.com/kopgo/kopgo/examples/database/api/v1alpha1]) asks for a
// PostgreSQL server; [Sync], a plain function of the Database and its
// observed children, returns four children and sets the Database's status:
//
//   - a Secret "<name>-credentials" with a password generated once
//     (reconciler.CreateOnce: created when missing, never written again,
//     whatever the spec becomes);
//   - a headless Service "<name>", so that each server pod has a DNS name,
//     <name>-0.<name>.<namespace>.svc;
//   - a StatefulSet "<name>" of spec.replicas pods of postgres:<version>,
//     each with a volume claim of spec.storage from its
//     volumeClaimTemplate, applied once the Secret exists
//     (reconciler.DependsOn);
//   - a migration Job "<name>-migrate" run once per spec.version
//     (reconciler.RunOnce keyed by the version), once the StatefulSet is
//     ready: a new version replaces the previous version's Job with a new
//     run.
//
// reconciler.Sync does the rest: it reads the children from the cache,
// applies them with server-side apply (nothing is sent when nothing
// changed), records one Synced event per reconcile that changed
// something, and summarises the children into the Database's conditions.
// [Reconciler] embeds the Syncer to do what a sync function cannot: it
// writes the Database's endpoint into a registry ConfigMap in the
// operator's namespace, and its Cleanup removes that entry when the
// Database is deleted (kopgo adds and removes the finalizer).
//
//	err := database.New(database.Options{LeaderElection: true}).Run(ctrl.SetupSignalHandler())
//
// # Status
//
// While the children are created and roll out, the Database is
// Reconciling, naming the child it waits for ("Job shop/orders-migrate
// waits for StatefulSet shop/orders to be ready", "StatefulSet orders: 1
// of 2 replicas available"). Once every child is ready it is Ready=True,
// reason Available, naming them:
//
//	PostgreSQL 17.2 at orders-0.orders.shop.svc:5432: StatefulSet orders with 2 of 2 replicas ready;
//	Service orders; Secret orders-credentials; Job orders-migrate migrated to 17.2
//
// status.readyReplicas mirrors the StatefulSet's, status.endpoint and
// status.credentialsSecret say where to connect and with what, and
// status.migratedVersion is the last version whose migration succeeded.
//
// # The password
//
// The Secret is written once, when it is created, and never again: a
// spec change, an operator restart or a new version leave the password as
// it is. The server keeps the password it was first started with in its
// data, so a Secret deleted by hand is created again with a new password
// that the data does not know: rotate a password in the server first,
// then edit the Secret, which the operator leaves alone.
//
// # Migrations
//
// The migration Job runs `vacuumdb --all --analyze-in-stages` with the
// server's image unless spec.migration names an image and a command (an
// application's schema migrations), with PGHOST, PGPORT, PGUSER and
// PGPASSWORD set. It runs once per version: a change to spec.migration
// alone does not run it again. A container that exits non-zero fails the
// Job at once (a pod failure policy; a half-applied migration needs a
// person, not a retry), and the Database becomes Ready=False, reason
// ChildFailed, with the Job's reason and exit code:
//
//	Job orders-migrate failed: PodFailurePolicy: Container migrate for pod shop/orders-migrate-79k72 failed with exit code 3 matching FailJob rule at index 0
//
// status.migratedVersion keeps the version that last succeeded. To retry
// the same version, fix the cause and delete the Job: Sync creates it
// again. A new version replaces the failed run with a new one.
//
// # Volumes and deletion
//
// spec.storage and spec.storageClassName cannot change once set (the CRD
// refuses it with a message: a StatefulSet's claim templates are
// immutable). The StatefulSet deletes its claims when it is deleted
// (persistentVolumeClaimRetentionPolicy whenDeleted: Delete) and keeps
// them when it scales down, so deleting a Database deletes its data: the
// garbage collector deletes the children (their controller reference
// names the Database), the StatefulSet's pods and claims with it, and the
// StorageClass's reclaim policy decides about the volumes. Before that,
// [Reconciler.Cleanup] removes the Database's registry entry.
//
// # Bad input
//
// The CRD's schema refuses what it can express (a version that is not
// N[.N[.N]], replicas outside 1-9, a storage change). What it cannot, Sync
// checks: a name that cannot name the Service (a DNS-1035 label) or is
// longer than [MaxNameLength], migration pod labels or annotations that
// are not valid, or that set the operator's own labels. Such a Database is
// Stalled with a message naming the field and is not retried until it
// changes:
//
//	validate Database shop/orders.v2: metadata.name: Invalid value: "orders.v2": names the headless Service, so it must be a DNS-1035 label: ...
//
// # Files
//
//   - api/v1alpha1: the Database types with kubebuilder markers;
//     zz_generated.deepcopy.go is generated by controller-gen.
//   - config/crd and config/rbac: the CustomResourceDefinition, and the
//     ClusterRole plus the leader-election Role (namespace database-system),
//     generated by controller-gen from the types and from the
//     +kubebuilder:rbac markers in operator.go. Regenerate them from the
//     repository root with `make generate`.
//   - sync.go, children.go, validate.go: the sync function and the
//     children; reconciler.go: the Reconciler, its registry entry and its
//     Cleanup; operator.go: the controller Builder ([New]).
//   - cmd/database: the operator's main, with --namespace, --leader-elect,
//     --health-port, --metrics-port, --concurrency and the zap logging
//     flags.
//   - e2e: tests against a full testkit cluster (volumes provisioned, pods
//     whose outcome the test chooses), as a user sees the operator, which
//     runs there bound only to the generated RBAC.
//
// # Try it
//
//	kubectl apply -f examples/database/config/crd
//	kubectl create namespace database-system
//	go run ./examples/database/cmd/database &
//	kubectl apply -f - <<EOF
//	apiVersion: database.examples.kopgo.dev/v1alpha1
//	kind: Database
//	metadata: {name: orders}
//	spec: {version: "17.2", replicas: 2, storage: 10Gi}
//	EOF
//	kubectl wait --for=condition=Ready database/orders
//	kubectl get secret orders-credentials -o jsonpath='{.data.password}' | base64 -d
package database

// Package testkit runs a real Kubernetes control plane on one machine for
// tests: etcd and kube-apiserver, and optionally kube-controller-manager,
// kube-scheduler and kwok fake nodes, all on loopback.
//
// Behaviour that depends on the API server (managed fields, resourceVersion,
// generation, finalizers, the status subresource, ownerReference garbage
// collection) is only proven against the real thing; this package makes the
// real thing cheap: a bare control plane is ready in about four seconds, a
// full cluster in about five.
//
// # Usage
//
// One cluster per test package, started from TestMain, one fresh namespace
// per test:
//
//	var cluster *testkit.Cluster
//
//	func TestMain(m *testing.M) {
//		testkit.Main(m, testkit.Options{}, func(c *testkit.Cluster) { cluster = c })
//	}
//
//	func TestSomething(t *testing.T) {
//		ns := cluster.Namespace(t) // deleted when the test ends
//		c := cluster.Client()      // admin client
//		...
//	}
//
// [Options.Full] adds kube-controller-manager (garbage collector, namespace,
// node lifecycle, workload, ClusterRole aggregation, resource-quota, volume
// and storage version migrator controllers), kube-scheduler, kwok with [Options.Nodes] fake nodes
// and a dynamic volume provisioner, so a Deployment becomes Available, a
// StatefulSet's volume claims are provisioned and bound, deleting an owner
// cascades to its children, the built-in admin, edit and view roles have
// their rules and a ResourceQuota's status counts. In either kind of
// cluster the Service range is a /16, so thousands of Services with cluster
// IPs fit. docs/testkit.md in the kopgo repository describes the full
// cluster: which controllers run, what kwok fakes, what is absent.
//
// # An operator for the whole suite
//
// [Cluster.Go] runs a function (an operator's manager) until the cluster
// stops, and [Cluster.Cleanup] registers any other teardown; both run
// before any component of the cluster stops, last registered first, so the
// operator stops while the API server still answers:
//
//	func TestMain(m *testing.M) {
//		testkit.Main(m, testkit.Options{Full: true}, func(c *testkit.Cluster) {
//			cluster = c
//			c.Go(mgr.Start) // a manager made from c.Config
//		})
//	}
//
// [Cluster.Stop] gives the whole order.
//
// # Volumes
//
// A full cluster has a default StorageClass, [StorageClassName]
// (WaitForFirstConsumer, reclaim policy Delete), and
// [ImmediateStorageClassName], both served by a provisioner built on the
// Kubernetes SIG Storage provisioner library: a claim gets a
// PersistentVolume of its size, bound by the controller manager, and a
// Released volume whose reclaim policy is Delete is deleted.
//
// # Choosing what a pod does
//
// No container runs: kwok writes the status of the pods on its nodes. By
// default a pod becomes Running and Ready, and a Job's pod then succeeds.
// The [PodOutcomeLabel] label, on a pod or its workload's pod template,
// chooses another outcome ([PodOutcomeSucceed], [PodOutcomeFail],
// [PodOutcomePending], [PodOutcomeCrashLoop], [PodOutcomeNotReady]), and
// annotations tune it ([PodDelayAnnotation], [PodExitCodeAnnotation],
// [PodReasonAnnotation], [PodMessageAnnotation]):
//
//	job.Spec.Template.Labels = map[string]string{testkit.PodOutcomeLabel: testkit.PodOutcomeFail}
//	job.Spec.Template.Annotations = map[string]string{testkit.PodExitCodeAnnotation: "42"}
//	// the Job ends Failed (BackoffLimitExceeded, or PodFailurePolicy on exit code 42)
//
// # Binaries
//
// The binaries are built from the Go module proxy by `make testkit-bin` in the
// kopgo repository (k8s.io/kubernetes and the etcd server live in a separate
// tools module, so this library never depends on them) and found as
// [Options.BinDir] describes. A missing binary is an error that names the
// make target.
//
// # Debugging
//
// [Cluster.Kubeconfig] is an admin kubeconfig; `go test -v` prints its path,
// so `KUBECONFIG=<path> kubectl get all -A` works while a test runs (add a
// time.Sleep where you want to look). Component logs are *.log files in
// [Cluster.Dir]. A component that fails to start is reported with the last
// lines of its log.
//
// # Testing an operator's RBAC
//
// [Cluster.UserConfig] authenticates as a user with no permissions beyond
// what RBAC grants it; bind it to the operator's generated ClusterRole and
// run the operator with it. [RecordPermissions] wraps that config and
// records the permission each request needed: a refused request is a
// missing rule (Permissions.Denied; a create refused because its namespace
// is being deleted is not), and a rule no request needed is an excess one
// (Permissions.Unused), so generated RBAC stays complete and minimal:
//
//	cfg, perms := testkit.RecordPermissions(userCfg)
//	... run the operator with cfg through a scenario ...
//	if unused := perms.Unused(clusterRole.Rules); len(unused) > 0 {
//		t.Errorf("RBAC rules never used: %v", unused)
//	}
//
// The API server runs with the OwnerReferencesPermissionEnforcement
// admission plugin, as many production clusters do, so a controller
// reference with blockOwnerDeletion needs "update" on the owner's
// finalizers here too.
//
// # Restarting the API server
//
// [Cluster.StopAPIServer] and [Cluster.StartAPIServer] restart the API server
// on the same port, etcd data and certificates, so clients and managers built
// before keep working: this is how reliability tests cut a controller off from
// its API server.
//
// # Nothing is left behind
//
// Every component (the provisioner too) runs in its own process group.
// [Cluster.Stop] stops them and removes [Cluster.Dir]. A test binary can also die without running
// deferred code (a panic in a goroutine, `go test -timeout`, os.Exit,
// SIGKILL), so each cluster also starts a reaper: a copy of the test binary,
// detected by this package's init function, that holds a pipe from its
// parent. When the pipe closes, however the parent died, the reaper kills the
// components that are still running, waits until their ports are closed and
// removes the directory. TestClusterIsCleanedUp proves it for each way of
// dying.
//
// # Why not envtest alone
//
// controller-runtime's envtest starts an API server, but it regenerates its
// certificates unless a certificate directory is fixed, offers no way to
// stop only the API server and start it again under live clients (stopping
// it under a running manager can wait for its full shutdown timeout), leaves
// processes behind when the test binary dies, and has no controller manager,
// scheduler or nodes. This package keeps envtest's CRD installation
// ([envtest.InstallCRDs]) and does the process management itself.
package testkit

// Package controller is the ConfigSet controller of kopgo's kubebuilder
// example: a kubebuilder v4 project (PROJECT, cmd/main.go, api/v1,
// internal/controller and the config/ kustomize overlays, in the shape
// kubebuilder v4.16.0 scaffolds them) whose plain controller-runtime
// reconciler uses kopgo's helper packages, and neither kopgo's reconciler
// contract nor its Builder. It shows an existing kubebuilder project what
// adopting them changes, and what it does not: cmd/main.go and
// suite_test.go are as kubebuilder scaffolds them, constructing the
// reconciler with a Client and a Scheme; [ConfigSetReconciler.SetupWithManager]
// builds kopgo's helpers from the manager (kopcontroller.EnvFor).
//
// A ConfigSet lists ConfigMaps by entry; [ConfigSetReconciler] keeps one
// ConfigMap per entry, named "<configset>-<entry>", and deletes those of
// removed entries:
//
//	if err := (&controller.ConfigSetReconciler{
//		Client: mgr.GetClient(),
//		Scheme: mgr.GetScheme(),
//	}).SetupWithManager(mgr); err != nil {
//		return err
//	}
//
// # What each kopgo package does here
//
//   - controller (kopcontroller.EnvFor): in SetupWithManager, a client that
//     writes as [FieldOwner], an Applier that reads ConfigMaps (a kind the
//     controller owns, so watches) from the manager's cache, and an event
//     recorder.
//   - apply: each ConfigMap is one server-side apply of a client-go apply
//     configuration; the outcome (Created, Updated, Unchanged) drives the
//     events, and an unchanged ConfigMap costs no request.
//   - owners: the ConfigMaps carry a controller reference
//     ([owners.ControllerApplyConfiguration]) and a label naming their
//     ConfigSet ([owners.OwnerLabel]).
//   - gc: [gc.Prune] deletes the ConfigMaps of removed entries: only those
//     that carry the label and that this ConfigSet controls.
//   - finalizers: [finalizers.Add] and [finalizers.Remove] touch this
//     controller's finalizer ([Finalizer]) and never another's.
//   - status: the ConfigSet type has no condition methods (its API package
//     knows nothing of kopgo), so [status.Access] gives the status package
//     its conditions and observedGeneration; [status.Begin] and
//     [status.Finish] decide Ready, Reconciling and Stalled from the
//     outcome, and [status.Patcher.Patch] writes the status only when it
//     changed.
//   - reconciler: [reconciler.Result] turns the outcome into
//     controller-runtime's result (a terminal error stops the retries).
//   - observability: events through the Env's recorder.
//
// # Testing
//
// suite_test.go and configset_controller_test.go are kubebuilder's
// scaffolded Ginkgo suite, with kopgo's testkit starting the control
// plane instead of envtest. configset_test.go runs the controller in a
// manager as a user bound only to the generated ClusterRole, and fails on a
// missing or an unused RBAC rule. hostile_test.go feeds it a few hundred
// generated hostile ConfigSets (names at the length limits, bad keys,
// control characters, data over 1 MiB): each is refused by the CRD's
// schema, ends Stalled naming its bad fields, or becomes Ready. The
// validation and the ConfigMaps it lets through are fuzzed:
//
//	go test ./examples/kubebuilder/internal/controller -run '^$' -fuzz FuzzValidate -fuzztime 60s
package controller

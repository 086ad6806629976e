// Package controller is the ConfigSet controller of kopgo's kubebuilder
// example: a plain controller-runtime reconciler, laid out as
// `kubebuilder create api` scaffolds it, that uses kopgo's helper packages
// and neither kopgo's reconciler nor its Builder. It shows an existing
// kubebuilder project how to adopt them one at a time.
//
// A ConfigSet lists ConfigMaps by entry; [ConfigSetReconciler] keeps one
// ConfigMap per entry, named "<configset>-<entry>", and deletes those of
// removed entries:
//
//	if err := (&controller.ConfigSetReconciler{
//		Client:   mgr.GetClient(),
//		Scheme:   mgr.GetScheme(),
//		Applier:  applier,  // apply.New(mgr.GetConfig(), controller.FieldOwner, apply.WithCluster(mgr))
//		Recorder: recorder, // observability.NewRecorder(mgr, ...)
//	}).SetupWithManager(mgr); err != nil {
//		return err
//	}
//
// # What each kopgo package does here
//
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
//   - status: [status.NewPatcher] snapshots the status as read;
//     [status.MarkReady] or [status.SetError] set the kstatus conditions, and
//     [status.Patcher.Patch] writes the status only when it changed.
//   - observability: events through an [observability.Recorder].
//
// # Testing
//
// configset_controller_test.go runs the controller in a real manager against
// a real kube-apiserver started by kopgo's testkit. hostile_test.go feeds it
// a few hundred generated hostile ConfigSets (names at the length limits,
// bad keys, control characters, data over 1 MiB): each is refused by the
// CRD's schema, ends Stalled naming its bad fields, or becomes Ready. The
// validation and the ConfigMaps it lets through are fuzzed:
//
//	go test ./examples/kubebuilder/internal/controller -run '^$' -fuzz FuzzValidate -fuzztime 60s
package controller

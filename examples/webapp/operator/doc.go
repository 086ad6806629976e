// Package operator is the WebApp operator, kopgo's complete example: a
// reconciler.Reconciler for the WebApp custom resource, run by kopgo's
// controller Builder with its operational options set: health and metrics
// ports, leader election, graceful shutdown, reconcile timeout, concurrency,
// Owns, a label-mapped Watch, WatcherConfig, FieldOwner and (with
// --selector) LabelSelector.
//
// For each WebApp it server-side applies three children, each with a
// controller owner reference so that deleting the WebApp cascades:
//
//   - a ConfigMap "<name>-config" holding Spec.Config,
//   - a Deployment "<name>" of Spec.Replicas pods running Spec.Image on
//     Spec.Port, reading the ConfigMap and every Secret labelled
//     [SecretLabel]=<name> as environment variables,
//   - a Service "<name>" in front of the pods.
//
// It reports Ready from the Deployment's rollout as status.ReadinessOf reads
// it (Reconciling while it rolls, Stalled when it exceeds its progress
// deadline), records the app's URL in a registry ConfigMap in the operator's
// namespace (an "external" resource that its finalizer removes when the
// WebApp is deleted), and emits events for every child it creates or
// changes.
//
// # Bad input
//
// The CRD's schema rejects what it can express (a port outside 1-65535,
// negative replicas). What it cannot, the reconciler checks: an image that is
// not a valid reference; a name that cannot name the Service and label the
// children (the API server accepts 253 characters and dots in a WebApp's
// name, a Service's name is a DNS-1035 label: at most 63 characters, no
// dots, a letter first); config keys that are not environment variable
// names or ConfigMap keys (at most 253 characters); config values over the
// 1 MiB a ConfigMap holds.
// Such a WebApp becomes Stalled (Ready=False) with a message naming the field,
// for example
//
//	validate WebApp demo/web: spec.image: Invalid value: "nginx:::": not a container image reference
//
// and is not retried until it changes: no crash loop, no backoff noise.
//
// # RBAC
//
// The +kubebuilder:rbac markers in reconcile.go are the operator's
// permissions; `make generate` writes them to config/rbac. The end-to-end
// test runs the operator as a user bound to exactly those rules and records
// every request it makes: a missing rule and a rule it never uses both fail
// the test.
//
// # Running it
//
//	go run ./examples/webapp/cmd/webapp          # against $KUBECONFIG
//	make demo                                    # against a local cluster it starts
package operator

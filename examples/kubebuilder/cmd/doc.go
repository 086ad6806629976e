// Command manager runs the ConfigSet controller of kopgo's kubebuilder
// example: kubebuilder's scaffolded main (v4.16.0), a plain
// controller-runtime manager whose reconciler uses kopgo's apply, status,
// finalizers, gc, owners and observability packages. Adopting kopgo
// changed nothing here: the reconciler gets kopgo's helpers in its
// SetupWithManager.
//
// Usage:
//
//	manager [--metrics-bind-address=:8443] [--metrics-secure=true] [--health-probe-bind-address=:8081] [--leader-elect] [--zap-log-level=info]
//
// config/default deploys it with kustomize (`kubectl apply -k
// examples/kubebuilder/config/default` once its image is built).
package main

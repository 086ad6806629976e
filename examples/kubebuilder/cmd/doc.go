// Command manager runs the ConfigSet controller of kopgo's kubebuilder
// example: a plain controller-runtime manager, as `kubebuilder init`
// scaffolds it, whose reconciler uses kopgo's apply, status, finalizers, gc,
// owners and observability packages.
//
// Usage:
//
//	manager [--metrics-bind-address=:8080] [--health-probe-bind-address=:8081] [--leader-elect]
package main

// Package e2e holds end-to-end tests that need the full testkit cluster
// (kube-controller-manager, kube-scheduler and kwok nodes): workloads that
// really roll out and deletions that really cascade. It has no API.
package e2e

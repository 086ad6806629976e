// Package e2e tests the Database operator (package
// github.com/kopgo/kopgo/examples/database) as its users see it, against
// a full testkit cluster: kube-apiserver, etcd, kube-controller-manager
// (garbage collector, StatefulSet, Job and volume controllers),
// kube-scheduler, kwok nodes and a volume provisioner. The operator runs
// for the whole suite, as cmd/database runs it, as a user bound only to
// the generated RBAC of config/rbac, through a configuration whose
// requests are counted and whose permissions are recorded: a request the
// API server refuses fails the test that caused it, and a rule no request
// needed fails TestGeneratedRBACIsMinimal.
//
// The example's own package tests its sync function without a cluster.
package e2e

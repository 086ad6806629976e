// Package reliability is kopgo's reliability suite: the examples/webapp
// operator, run as a separate process (the real binary, with --kubeconfig)
// as a user bound only to its generated RBAC, against a full testkit
// cluster, through scenarios an operator meets in production: API errors,
// throttling, latency, dropped watches and lost answers (a fault-injecting
// proxy between the operator and the API server), an API server restart, a
// leader failover, a shutdown with reconciles in flight, one object that
// keeps failing, and other clients writing the same objects.
//
// Every scenario ends by checking the final state object by object: every
// WebApp Ready=True at its current generation, exactly its three children
// controlled by it, its finalizer and its registry entry present, nothing
// orphaned or duplicated. The suite prints a table of what it measured.
//
// `make test-reliability` runs it with RELIABILITY_N parents per scenario
// (default 200). Without RELIABILITY_N, `go test ./...` runs a short variant
// (20 parents, shorter outages); -short skips the package.
// RELIABILITY_WRITE=1 writes the table into RESULTS.md.
package reliability

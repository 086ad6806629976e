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
// (default 200: the full variant, 40 s API server outage, one-minute quiet
// window, about half an hour); RELIABILITY_N=20 is the short variant (5 s
// outage, 15 s quiet window, about three minutes). RELIABILITY_N is at most
// 5000: every WebApp has a Service with a cluster IP in the testkit's
// Service range (a /16). Without RELIABILITY_N
// the package skips itself, so `make test` stays within its budget.
// RELIABILITY_WRITE=1 writes the table into RESULTS.md.
package reliability

// Package demo is the walkthrough `make demo` runs and the end-to-end test
// checks: the WebApp operator (package operator) started in-process as a user
// bound only to its generated RBAC (Install, StartOperator), and a WebApp's
// life shown step by step with every expectation checked (Walkthrough):
// children applied, the Deployment rolled out until Ready=True, a scale,
// bad input reported as Stalled with the field named, the events, and a
// deletion with the finalizer's cleanup and the garbage collector's cascade.
//
// It needs a full cluster (controller manager, scheduler and nodes): the
// testkit's, as `make demo` and the test start it, or any other.
package demo

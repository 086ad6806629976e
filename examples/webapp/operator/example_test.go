package operator_test

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kopgo/kopgo/examples/webapp/operator"
)

// The operator's main: every option has a default; Run blocks until the
// signal, then shuts down gracefully and releases the leader lease.
func Example() {
	err := operator.New(operator.Options{LeaderElection: true, Concurrency: 8}).Run(ctrl.SetupSignalHandler())
	if err != nil {
		panic(err)
	}
}

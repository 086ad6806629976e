// Command database runs the Database operator, kopgo's example of
// declarative children (package github.com/kopgo/kopgo/examples/database),
// against the cluster of --kubeconfig, $KUBECONFIG, the in-cluster
// configuration or ~/.kube/config. Install the CRD and the operator's
// namespace (its registry ConfigMap and leader-election Lease live there)
// first:
//
//	kubectl apply -f examples/database/config/crd
//	kubectl create namespace database-system
//	go run ./examples/database/cmd/database --leader-elect
//
// Stop it with SIGTERM or Ctrl-C: in-flight reconciles finish (up to 30 s),
// the leader lease is released, and the process exits 0.
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kopgo/kopgo/examples/database"
)

func main() {
	var o database.Options
	flag.StringVar(&o.Namespace, "namespace", "database-system", "namespace of the registry ConfigMap and the leader-election lease (must exist)")
	flag.IntVar(&o.HealthPort, "health-port", 8081, "port of /healthz and /readyz (-1: off)")
	flag.IntVar(&o.MetricsPort, "metrics-port", 8080, "port of /metrics (-1: off)")
	flag.BoolVar(&o.LeaderElection, "leader-elect", false, "run one active replica at a time")
	flag.IntVar(&o.Concurrency, "concurrency", 4, "Databases reconciled at once")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if err := database.New(o).Run(ctrl.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, "database:", err)
		os.Exit(1)
	}
}

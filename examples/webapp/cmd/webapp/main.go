// Command webapp runs the WebApp operator against the cluster of the current
// kubeconfig ($KUBECONFIG, ~/.kube/config or in-cluster).
//
// Install the CRD and the namespace first:
//
//	kubectl apply -f examples/webapp/config/crd
//	kubectl create namespace webapp-system
//	go run ./examples/webapp/cmd/webapp
//
// Stop it with Ctrl-C: in-flight reconciles finish (up to 30 s) and the
// leader lease is released.
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kopgo/kopgo/examples/webapp/operator"
)

func main() {
	var o operator.Options
	flag.StringVar(&o.Namespace, "namespace", "webapp-system", "namespace of the leader-election lease and the registry ConfigMap (must exist)")
	flag.IntVar(&o.HealthPort, "health-port", 8081, "port of /healthz and /readyz (-1: off)")
	flag.IntVar(&o.MetricsPort, "metrics-port", 8080, "port of /metrics (-1: off)")
	flag.BoolVar(&o.LeaderElection, "leader-elect", false, "run one active replica at a time")
	flag.IntVar(&o.Concurrency, "concurrency", 4, "WebApps reconciled at once")
	flag.StringVar(&o.Selector, "selector", "", "only reconcile WebApps matching this label selector")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if err := operator.New(o).Run(ctrl.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, "webapp:", err)
		os.Exit(1)
	}
}

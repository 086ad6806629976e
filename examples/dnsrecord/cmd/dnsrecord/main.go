// Command dnsrecord runs the DNSRecord operator against the cluster of the
// current kubeconfig ($KUBECONFIG, ~/.kube/config or in-cluster), keeping
// records at the provider at -provider-url (cmd/provider serves one).
//
//	kubectl apply -f examples/dnsrecord/config/crd
//	go run ./examples/dnsrecord/cmd/provider -addr 127.0.0.1:8053 -token s3cret &
//	go run ./examples/dnsrecord/cmd/dnsrecord -provider-url http://127.0.0.1:8053
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kopgo/kopgo/examples/dnsrecord/operator"
)

func main() {
	var o operator.Options
	var health, metrics int
	var leader bool
	flag.StringVar(&o.ProviderURL, "provider-url", "http://127.0.0.1:8053", "base URL of the DNS provider's API")
	flag.DurationVar(&o.Period, "period", 0, "how often each record is checked for drift (0: 5m)")
	flag.IntVar(&health, "health-port", 8081, "port of /healthz and /readyz (-1: off)")
	flag.IntVar(&metrics, "metrics-port", 8080, "port of /metrics, HTTPS with authorization (-1: off)")
	flag.BoolVar(&leader, "leader-elect", false, "run one active replica at a time (lease in namespace dnsrecord-system)")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	b := operator.Builder(o).HealthPort(health).MetricsPort(metrics)
	if leader {
		b = b.LeaderElection("dnsrecord-system", "dnsrecord")
	}
	if err := b.Run(ctrl.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, "dnsrecord:", err)
		os.Exit(1)
	}
}

// Command echoserver runs the EchoServer operator, kopgo's declarative
// example (package github.com/kopgo/kopgo/examples/echoserver), against the
// cluster of --kubeconfig, $KUBECONFIG, the in-cluster configuration or
// ~/.kube/config. Install the CRD (and, for leader election, the namespace)
// first:
//
//	kubectl apply -f examples/echoserver/config/crd
//	kubectl create namespace echoserver-system
//	go run ./examples/echoserver/cmd/echoserver --leader-elect
//
// Run two replicas with --leader-elect: one reconciles, the other stands by
// (ready, serving health and metrics) and takes over when the first stops.
// Stop it with SIGTERM or Ctrl-C: in-flight reconciles finish (up to 30 s),
// the leader lease is released at once so that the standby takes over
// without waiting for it to expire, and the process exits 0.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/examples/echoserver"
	"github.com/kopgo/kopgo/examples/echoserver/api/v1alpha1"
	"github.com/kopgo/kopgo/reconciler"
)

// Leader election's permissions, in the lease's namespace: the Lease, and
// the Event recording each new leader. `make generate` writes them to
// config/rbac as a Role next to the operator's ClusterRole.
//
// The metrics endpoint (kopgo's secure default) asks the API server who
// the scraper is and whether it may read /metrics:
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=echoserver-system
// +kubebuilder:rbac:groups="",resources=events,verbs=create,namespace=echoserver-system

// name is the controller's name, its field manager, and (with "-operator")
// its leader-election Lease.
const name = "echoserver"

// options are the command's flags; --kubeconfig is controller-runtime's,
// read by ctrl.GetConfig when the Builder runs.
type options struct {
	namespace               string
	healthPort, metricsPort int
	leaderElection          bool
	concurrency             int
	selector                string
}

func main() {
	var o options
	flag.StringVar(&o.namespace, "namespace", "echoserver-system", "namespace of the leader-election lease (must exist)")
	flag.IntVar(&o.healthPort, "health-port", 8081, "port of /healthz and /readyz (-1: off)")
	flag.IntVar(&o.metricsPort, "metrics-port", 8080, "port of /metrics (-1: off)")
	flag.BoolVar(&o.leaderElection, "leader-elect", false, "run one active replica at a time")
	flag.IntVar(&o.concurrency, "concurrency", 4, "EchoServers reconciled at once")
	flag.StringVar(&o.selector, "selector", "", "only reconcile EchoServers matching this label selector")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if err := newBuilder(o).Run(ctrl.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, "echoserver:", err)
		os.Exit(1)
	}
}

// newBuilder is the operator: the EchoServer sync function run by kopgo's
// controller Builder with the options of o.
func newBuilder(o options) *kopcontroller.Builder[*v1alpha1.EchoServer] {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	b := kopcontroller.New[*v1alpha1.EchoServer](name,
		reconciler.Sync(echoserver.ChildKinds(), echoserver.Sync)).
		Scheme(scheme).
		HealthPort(o.healthPort).
		MetricsPort(o.metricsPort).
		GracefulShutdown(30 * time.Second).
		ReconcileTimeout(time.Minute).
		Concurrency(o.concurrency).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{})
	if o.leaderElection {
		b = b.LeaderElection(o.namespace, name+"-operator")
	}
	if o.selector != "" {
		b = b.LabelSelector(o.selector)
	}
	return b
}

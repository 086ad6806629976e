package main

import (
	"context"
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kopgo/kopgo/apply"
	"github.com/kopgo/kopgo/examples/kubebuilder/api/v1alpha1"
	"github.com/kopgo/kopgo/examples/kubebuilder/internal/controller"
	"github.com/kopgo/kopgo/observability"
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
}

func main() {
	var metricsAddr, probeAddr string
	var enableLeaderElection bool
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "The address the metrics endpoint binds to. Use 0 to disable it.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	flag.BoolVar(&enableLeaderElection, "leader-elect", false,
		"Enable leader election for the controller manager, so that only one replica is active at a time.")
	// kubebuilder scaffolds zap; any logr.Logger does, klog's here.
	logConfig := textlogger.NewConfig()
	logConfig.AddFlags(flag.CommandLine) // -v, -vmodule
	flag.Parse()
	ctrl.SetLogger(textlogger.NewLogger(logConfig))

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         enableLeaderElection,
		LeaderElectionID:       "configset.kubebuilder.examples.kopgo.dev",
	})
	if err != nil {
		setupLog.Error(err, "Unable to create manager")
		os.Exit(1)
	}

	// kopgo's helpers: an Applier that shares the manager's cache, HTTP
	// client and REST mapper, and an events.k8s.io recorder.
	applier, err := apply.New(mgr.GetConfig(), controller.FieldOwner, apply.WithCluster(mgr))
	if err != nil {
		setupLog.Error(err, "Unable to create applier")
		os.Exit(1)
	}
	// The recorder writes through the manager's client and flushes the
	// counts of repeated events when the manager stops.
	recorder, err := observability.NewRecorder(mgr, controller.FieldOwner)
	if err != nil {
		setupLog.Error(err, "Unable to create event recorder")
		os.Exit(1)
	}

	if err := (&controller.ConfigSetReconciler{
		Client:   mgr.GetClient(),
		Scheme:   mgr.GetScheme(),
		Applier:  applier,
		Recorder: recorder,
	}).SetupWithManager(mgr); err != nil {
		setupLog.Error(err, "Unable to create controller", "controller", "ConfigSet")
		os.Exit(1)
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		setupLog.Error(err, "Unable to set up health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		setupLog.Error(err, "Unable to set up ready check")
		os.Exit(1)
	}

	setupLog.Info("Starting manager")
	err = mgr.Start(ctrl.SetupSignalHandler())
	// Counts of events recorded while the manager drained, written too.
	recorder.Shutdown(context.Background())
	if err != nil {
		setupLog.Error(err, "Problem running manager")
		os.Exit(1)
	}
}

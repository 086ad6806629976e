package controller

import (
	"context"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kubebuilderv1 "github.com/kopgo/kopgo/examples/kubebuilder/api/v1"
	"github.com/kopgo/kopgo/test/testkit"
	// +kubebuilder:scaffold:imports
)

// kubebuilder's scaffolded suite (v4.16.0), with the controller started in
// BeforeSuite as the CronJob tutorial adds it, and one change: kopgo's
// testkit starts the control plane instead of envtest (the same
// kube-apiserver and etcd, built by `make testkit-bin` instead of
// downloaded by setup-envtest). Adopting kopgo's helpers changed nothing
// in it: the reconciler is constructed with a Client and a Scheme, and
// its SetupWithManager builds the rest.

// These tests use Ginkgo (BDD-style Go testing framework). Refer to
// http://onsi.github.io/ginkgo/ to learn more about Ginkgo.

var (
	ctx       context.Context
	cancel    context.CancelFunc
	testEnv   *testkit.Cluster
	cfg       *rest.Config
	k8sClient client.Client
)

func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)

	RunSpecs(t, "Controller Suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))

	ctx, cancel = context.WithCancel(context.TODO())

	var err error
	err = kubebuilderv1.AddToScheme(scheme.Scheme)
	Expect(err).NotTo(HaveOccurred())

	// +kubebuilder:scaffold:scheme

	By("bootstrapping test environment")
	testEnv, err = testkit.Start(ctx, testkit.Options{
		Scheme:   scheme.Scheme,
		CRDPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
	})
	Expect(err).NotTo(HaveOccurred())

	// cfg is defined in this file globally.
	cfg = testEnv.Config
	Expect(cfg).NotTo(BeNil())

	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme.Scheme})
	Expect(err).NotTo(HaveOccurred())
	Expect(k8sClient).NotTo(BeNil())

	// The controller runs in a manager, as in main.go (the CronJob
	// tutorial's addition to the scaffold). Metrics off: the default
	// :8080 may be taken on a shared machine.
	k8sManager, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	Expect(err).ToNot(HaveOccurred())

	err = (&ConfigSetReconciler{
		Client: k8sManager.GetClient(),
		Scheme: k8sManager.GetScheme(),
	}).SetupWithManager(k8sManager)
	Expect(err).ToNot(HaveOccurred())

	go func() {
		defer GinkgoRecover()
		err = k8sManager.Start(ctx)
		Expect(err).ToNot(HaveOccurred(), "failed to run manager")
	}()
})

var _ = AfterSuite(func() {
	By("tearing down the test environment")
	cancel()
	testEnv.Stop()
})

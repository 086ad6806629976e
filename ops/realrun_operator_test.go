package ops_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopcontroller "github.com/kopgo/kopgo/controller"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/gc"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

// The real run's operator is this test binary started again with
// operatorEnv set: TestMain then runs one kopgo operator process (a
// Builder's Run, with its own registry, metrics server and lease) instead
// of the tests, so that a replica can be killed, restarted and replaced as
// a pod would be.
const (
	operatorEnv   = "KOPGO_OPS_OPERATOR"   // the controller's name, also its lease's
	kubeconfigEnv = "KOPGO_OPS_KUBECONFIG" // the cluster's admin kubeconfig
	portEnv       = "KOPGO_OPS_METRICS_PORT"
	namespaceEnv  = "KOPGO_OPS_NAMESPACE"   // of the lease
	workersEnv    = "KOPGO_OPS_CONCURRENCY" // Builder.Concurrency; default 4
	leaseEnv      = "KOPGO_OPS_LEASE"       // "lease/renew/retry", Go durations
)

// scenarioLabel selects a controller's Widgets: each operator reconciles
// the Widgets labelled with its controller's name.
const scenarioLabel = "ops.kopgo.dev/scenario"

// faultAnnotation is the fault a Widget injects into its reconcile.
const faultAnnotation = "ops.kopgo.dev/fault"

// The faults.
const (
	faultStall    = "stall"    // a terminal error: the spec cannot be built; the object is Stalled
	faultError    = "error"    // a dependency is unavailable: every reconcile fails, retried
	faultHotLoop  = "hotloop"  // the reconciler asks to look again after 200 ms, forever
	faultSlow     = "slow"     // each reconcile takes a second
	faultStuck    = "stuck"    // the reconcile never returns (until shutdown)
	faultNotReady = "notready" // the Deployment child's pods never become ready
)

// errorRetry is how long a Widget with faultError waits between attempts:
// the loop's longest backoff, 5 minutes, divided by the real run's time
// scale, so that a failing object is retried in every rate window as it is
// in production.
const errorRetry = 15 * time.Second

func TestMain(m *testing.M) {
	if os.Getenv(operatorEnv) != "" {
		os.Exit(runOperator())
	}
	os.Exit(m.Run())
}

func runOperator() int {
	if err := operator(); err != nil {
		fmt.Fprintln(os.Stderr, "operator:", err)
		return 1
	}
	return 0
}

func operator() error {
	name := os.Getenv(operatorEnv)
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(kubeconfigEnv))
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 200, 400
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := widget.AddToScheme(scheme); err != nil {
		return err
	}
	port, err := strconv.Atoi(os.Getenv(portEnv))
	if err != nil {
		return fmt.Errorf("metrics port: %w", err)
	}
	workers := 4
	if s := os.Getenv(workersEnv); s != "" {
		if workers, err = strconv.Atoi(s); err != nil {
			return fmt.Errorf("concurrency: %w", err)
		}
	}
	// Sync's pruning counts into kopgo_gc_deletions_total only with the
	// gc.Metrics option (the dashboard's "Garbage collected" panel).
	m, err := observability.Default()
	if err != nil {
		return err
	}
	var r reconciler.Reconciler[*widget.Widget] = faultyReconciler{reconciler.Sync([]client.Object{&corev1.ConfigMap{}, &appsv1.Deployment{}}, syncWidget,
		reconciler.WithPruneOptions(gc.Metrics{Metrics: m, Controller: name}))}
	if u := os.Getenv(externalEnv); u != "" {
		// One resource per Widget in the test's external system.
		r = external.New(connectWidgets(u), external.WithPeriod(externalPeriod))
	}
	b := kopcontroller.New[*widget.Widget](name, r).
		Config(cfg).Scheme(scheme).
		LabelSelector(scenarioLabel+"="+name).
		MetricsPort(port, kopcontroller.InsecureMetrics). // plain HTTP for the test's scraper
		Concurrency(workers).
		LeaderElection(os.Getenv(namespaceEnv), name).
		GracefulShutdown(4 * time.Second)
	if s := os.Getenv(leaseEnv); s != "" {
		var d [3]time.Duration
		for i, part := range strings.SplitN(s, "/", 3) {
			if d[i], err = time.ParseDuration(part); err != nil {
				return fmt.Errorf("lease timings %q: %w", s, err)
			}
		}
		b = b.LeaderElectionTimings(d[0], d[1], d[2])
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return b.Run(ctx)
}

// faultyReconciler is a Syncer whose failures are retried every
// errorRetry when a dependency is unavailable.
type faultyReconciler struct {
	*reconciler.Syncer[*widget.Widget]
}

// RetryAfter implements reconciler.ErrorPolicy.
func (faultyReconciler) RetryAfter(_ *widget.Widget, err error, _ int) time.Duration {
	if koperrors.KindOf(err) == koperrors.Unavailable {
		return errorRetry
	}
	return 0
}

// syncWidget wants a ConfigMap for every Widget and, when spec.size > 0, a
// Deployment of that many replicas; the Widget's fault annotation breaks
// it in its own way.
func syncWidget(ctx context.Context, w *widget.Widget, _ reconciler.Children) ([]client.Object, reconciler.Action, error) {
	fault := w.Annotations[faultAnnotation]
	switch fault {
	case faultStall:
		return nil, reconciler.Done(), koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "widget %s: this spec can never be built", w.Name))
	case faultError:
		return nil, reconciler.Done(), koperrors.Errorf(koperrors.Unavailable, "widget %s: the widget registry does not answer", w.Name)
	case faultSlow:
		// No children: the events of a controller's children reach the
		// queues of every controller of the kind (their owner is a
		// Widget, whichever selector it matches), and would fill the
		// stuck controller's.
		select {
		case <-time.After(time.Second):
			return nil, reconciler.Done(), nil
		case <-ctx.Done():
			return nil, reconciler.Done(), ctx.Err()
		}
	case faultStuck:
		<-ctx.Done()
		return nil, reconciler.Done(), ctx.Err()
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: w.Name},
		Data:       map[string]string{"size": strconv.FormatInt(w.Spec.Size, 10)},
	}
	desired := []client.Object{cm}
	if w.Spec.Size > 0 {
		desired = append(desired, deployment(w, fault == faultNotReady))
	}
	if fault == faultHotLoop {
		return desired, reconciler.RequeueAfter(200 * time.Millisecond), nil
	}
	return desired, reconciler.Done(), nil
}

func deployment(w *widget.Widget, neverReady bool) *appsv1.Deployment {
	replicas := int32(w.Spec.Size)
	labels := map[string]string{"app": w.Name}
	podLabels := map[string]string{"app": w.Name}
	if neverReady {
		podLabels[testkit.PodOutcomeLabel] = testkit.PodOutcomeNotReady
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: w.Name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "widget", Image: "example.com/widget:1"}}},
			},
		},
	}
}

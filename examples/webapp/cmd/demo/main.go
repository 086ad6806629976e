// Command demo is `make demo`: it starts a local Kubernetes cluster (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok fake
// nodes, all built from the Go module proxy into bin/), installs the WebApp
// CRD and the operator's RBAC, runs the WebApp operator as a user bound only
// to that RBAC, and walks through a WebApp's life: create, roll out, scale,
// bad input, events, delete with finalizer cleanup and cascade. It prints a
// summary with timings, stops everything it started and exits 0, or exits 1
// naming the expectation that was not met.
//
//	go run ./examples/webapp/cmd/demo [-keep] [-nodes 2]
//
// With -keep the cluster and the operator stay up after the walkthrough and
// the kubeconfig's path is printed, for kubectl; Ctrl-C ends it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kopgo/kopgo/examples/webapp"
	webappv1 "github.com/kopgo/kopgo/examples/webapp/api/v1alpha1"
	"github.com/kopgo/kopgo/examples/webapp/demo"
	"github.com/kopgo/kopgo/examples/webapp/operator"
	"github.com/kopgo/kopgo/test/testkit"
)

func main() {
	keep := flag.Bool("keep", false, "keep the cluster and the operator running after the walkthrough, until Ctrl-C")
	nodes := flag.Int("nodes", 2, "number of kwok fake nodes")
	flag.Parse()
	// The operator's own logs would drown the walkthrough; its outcomes show
	// in the WebApp's status and events instead.
	ctrl.SetLogger(logr.Discard())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdout, *nodes, *keep)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "\ndemo failed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, nodes int, keep bool) (err error) {
	begin := time.Now()
	say := func(format string, args ...any) { _, _ = fmt.Fprintf(out, format+"\n", args...) }

	say("==> Starting a local cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, %d kwok nodes", nodes)
	crds, err := webapp.CRDs()
	if err != nil {
		return err
	}
	t0 := time.Now()
	cluster, err := testkit.Start(ctx, testkit.Options{Full: true, Nodes: nodes, CRDs: crds, Scheme: operator.Scheme()})
	if err != nil {
		return err
	}
	defer func() {
		say("\n==> Stopping the cluster")
		cluster.Stop()
		say("    all processes stopped, %s removed", cluster.Dir)
	}()
	clusterUp := time.Since(t0)
	say("    cluster ready in %.1fs; WebApp CRD installed", clusterUp.Seconds())

	say("\n==> Installing the operator's RBAC (config/rbac) for user %q", operatorUser)
	if err := demo.Install(ctx, cluster.Client(), operatorUser); err != nil {
		return err
	}
	cfg, err := cluster.UserConfig(operatorUser)
	if err != nil {
		return err
	}
	say("\n==> Starting the WebApp operator as %q (leader election, health, metrics, 4 workers)", operatorUser)
	t0 = time.Now()
	op, err := demo.StartOperator(ctx, cfg, "webapp")
	if err != nil {
		return err
	}
	operatorUp := time.Since(t0)
	say("    ready in %.1fs: /readyz on %s, /metrics on %s", operatorUp.Seconds(), op.HealthAddr, op.MetricsAddr)

	summary, werr := demo.Walkthrough(ctx, cluster.Client(), "demo", out)
	token, merr := demo.MetricsToken(ctx, cluster.Client())
	var reconciles map[string]int
	if merr == nil {
		reconciles, merr = op.Reconciles(ctx, token)
	}

	if keep && werr == nil {
		app := &webappv1.WebApp{
			ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "demo"},
			Spec:       webappv1.WebAppSpec{Image: "nginx:1.27", Replicas: new(int32(2))},
		}
		werr = cluster.Client().Create(ctx, app)
		if werr == nil {
			say("\n==> The cluster and the operator keep running, with WebApp demo/hello. Look around:")
			say("    export KUBECONFIG=%s", cluster.Kubeconfig)
			say("    kubectl get webapps,deployments,pods -n demo")
			say("    kubectl scale webapp hello -n demo --replicas=4    # the CRD has a scale subresource")
			say("    kubectl events -n demo --for webapp/hello")
			say("    curl -sk -H \"Authorization: Bearer $(kubectl create token %s -n %s)\" https://%s/metrics | grep kopgo_",
				demo.MetricsReader, demo.OperatorNamespace, op.MetricsAddr)
			say("    Ctrl-C stops everything.")
			<-ctx.Done()
		}
	}
	if serr := op.Stop(); serr != nil && werr == nil {
		werr = fmt.Errorf("operator: %w", serr)
	}
	if werr != nil {
		return werr
	}

	say("\n==> Summary")
	say("  %-52s %6.1fs", "cluster start (5 components, built once into bin/)", clusterUp.Seconds())
	say("  %-52s %6.1fs", "operator start (caches synced, leader elected)", operatorUp.Seconds())
	summary.Print(out)
	if merr == nil {
		say("  reconciles (kopgo_reconcile_total): %v", reconciles)
	}
	say("  wall clock: %.1fs", time.Since(begin).Seconds())
	return nil
}

const operatorUser = "webapp-operator"

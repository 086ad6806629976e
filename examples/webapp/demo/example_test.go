package demo_test

import (
	"context"
	"os"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/examples/webapp/demo"
)

// The walkthrough against any full cluster: admin is a cluster-admin client
// with the WebApp scheme, operatorCfg the operator's identity (bound by
// Install).
func Example() {
	ctx := context.Background()
	var admin client.Client      // e.g. testkit.Cluster.Client()
	var operatorCfg *rest.Config // e.g. testkit.Cluster.UserConfig("webapp-operator")
	if err := demo.Install(ctx, admin, "webapp-operator"); err != nil {
		panic(err)
	}
	op, err := demo.StartOperator(ctx, operatorCfg, "webapp")
	if err != nil {
		panic(err)
	}
	defer func() { _ = op.Stop() }()
	summary, err := demo.Walkthrough(ctx, admin, "demo", os.Stdout)
	if err != nil {
		panic(err)
	}
	summary.Print(os.Stdout)
}

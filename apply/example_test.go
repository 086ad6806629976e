package apply_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
)

// A plain controller-runtime reconciler that applies a ConfigMap per
// Deployment. The Applier shares the manager's HTTP client, RESTMapper and
// cache; an unchanged ConfigMap costs no request, after a restart too: the
// cache keeps the Applier's managedFields entry (and drops the others').
func Example() {
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{Cache: cache.Options{
		DefaultTransform: apply.KeepManagedFields("settings-controller"),
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	applier, err := apply.New(mgr.GetConfig(), "settings-controller",
		apply.WithScheme(mgr.GetScheme()),
		apply.WithCache(mgr.GetCache()),
		apply.WithHTTPClient(mgr.GetHTTPClient()),
		apply.WithRESTMapper(mgr.GetRESTMapper()))
	if err != nil {
		fmt.Println(err)
		return
	}
	r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		var d appsv1.Deployment
		if err := mgr.GetClient().Get(ctx, req.NamespacedName, &d); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		res, err := applier.Apply(ctx, corev1ac.ConfigMap(d.Name+"-settings", d.Namespace).
			WithData(map[string]string{"image": d.Spec.Template.Spec.Containers[0].Image}))
		if err != nil {
			return reconcile.Result{}, err
		}
		ctrl.LoggerFrom(ctx).Info("Applied settings", "outcome", res.Outcome.String(), "requests", res.Requests)
		return reconcile.Result{}, nil
	})
	if err := ctrl.NewControllerManagedBy(mgr).For(&appsv1.Deployment{}).Complete(r); err != nil {
		fmt.Println(err)
		return
	}
	_ = mgr.Start(ctrl.SetupSignalHandler())
}

// Apply a ConfigMap and act on the outcome.
func ExampleApplier_Apply() {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Println("no cluster:", err)
		return
	}
	a, err := apply.New(cfg, "example-controller")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := a.Apply(context.Background(),
		corev1ac.ConfigMap("settings", "default").WithData(map[string]string{"color": "blue"}))
	switch {
	case apply.Conflicts(err) != nil:
		// Another field manager owns some of these fields: take them over.
		res, err = a.Apply(context.Background(),
			corev1ac.ConfigMap("settings", "default").WithData(map[string]string{"color": "blue"}), apply.Force(true))
	case koperrors.KindOf(err) == koperrors.Invalid:
		fmt.Println("bad intent:", err)
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Outcome, res.Object().GetResourceVersion())
}

func ExampleOutcome() {
	for _, o := range []apply.Outcome{apply.Created, apply.Updated, apply.Unchanged} {
		fmt.Println(o)
	}
	// Output:
	// Created
	// Updated
	// Unchanged
}

func ExampleFieldConflict() {
	c := apply.FieldConflict{Manager: "hpa-controller", Field: ".spec.replicas"}
	fmt.Printf("%s is owned by %s\n", c.Field, c.Manager)
	// Output:
	// .spec.replicas is owned by hpa-controller
}

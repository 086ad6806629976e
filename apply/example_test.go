package apply_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
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
	applier, err := apply.New(mgr.GetConfig(), "settings-controller", apply.WithCluster(mgr))
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

// Apply a ConfigMap and act on the outcome. The Applier does not force
// ownership by default: it leaves the fields other managers own to them and
// reports them as a conflict (Force(false) says so explicitly).
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
		corev1ac.ConfigMap("settings", "default").WithData(map[string]string{"color": "blue"}), apply.Force(false))
	switch {
	case apply.Conflicts(err) != nil:
		// Another field manager owns some of these fields: take them over
		// where the object is known to be ours.
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

// Unit-test a reconciler without a cluster: reconciler.Env's Applier is an
// apply.Interface, and a Fake records what the reconciler applies and
// answers with the outcomes and errors the test chooses.
func ExampleFake() {
	// The reconciler under test: one ConfigMap per parent ConfigMap, and an
	// event when it was created.
	r := reconciler.Func[*corev1.ConfigMap](func(ctx context.Context, parent *corev1.ConfigMap, env *reconciler.Env) (reconciler.Action, error) {
		res, err := env.Applier.Apply(ctx, corev1ac.ConfigMap(parent.Name+"-settings", parent.Namespace).
			WithData(map[string]string{"color": parent.Data["color"]}))
		if err != nil {
			return reconciler.Done(), err
		}
		if res.Outcome == apply.Created {
			env.Recorder.Normal(parent, nil, "Created", "Apply", "created "+res.Object().GetName())
		}
		return reconciler.Done(), nil
	})

	fake := &apply.Fake{}
	events := &observability.FakeRecorder{}
	env := &reconciler.Env{Applier: fake, Recorder: events}
	parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Data: map[string]string{"color": "blue"}}
	for range 2 {
		if _, err := r.Reconcile(context.Background(), parent, env); err != nil {
			fmt.Println(err)
		}
	}
	for _, u := range fake.Applied() {
		data, _, _ := unstructured.NestedStringMap(u.Object, "data")
		fmt.Println("applied", u.GetKind(), u.GetNamespace()+"/"+u.GetName(), data)
	}
	for _, e := range events.Events() {
		fmt.Println("event", e.Reason, e.Note)
	}

	// The API server refuses the apply: the reconciler returns the error.
	fake.Respond = func(*unstructured.Unstructured, *client.ApplyOptions) (apply.Outcome, error) {
		return 0, koperrors.Errorf(koperrors.Forbidden, "configmaps is forbidden")
	}
	_, err := r.Reconcile(context.Background(), parent, env)
	fmt.Println(koperrors.KindOf(err), err)
	// Output:
	// applied ConfigMap default/web-settings map[color:blue]
	// applied ConfigMap default/web-settings map[color:blue]
	// event Created created web-settings
	// Forbidden apply ConfigMap default/web-settings: configmaps is forbidden
}

func ExampleOutcome() {
	for _, o := range []apply.Outcome{apply.Created, apply.Updated, apply.Unchanged} {
		fmt.Println(o)
	}
	// A failed apply claims nothing.
	var failed apply.Result
	fmt.Println(failed.Outcome, failed.Outcome == apply.Unchanged)
	// Output:
	// Created
	// Updated
	// Unchanged
	// None false
}

func ExampleFieldConflict() {
	c := apply.FieldConflict{Manager: "hpa-controller", Field: ".spec.replicas"}
	fmt.Printf("%s is owned by %s\n", c.Field, c.Manager)
	// Output:
	// .spec.replicas is owned by hpa-controller
}

package controller_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	kopcontroller "github.com/kopgo/kopgo/controller"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/owners"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// A complete operator main: the reconciler, and the Builder with probes,
// metrics, leader election, graceful shutdown, a timeout, concurrency and
// watches. It runs against the cluster in KUBECONFIG until SIGTERM.
func ExampleBuilder_Run() {
	r := reconciler.Func[*widget.Widget](func(_ context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
		env.Recorder.Normal(w, nil, "Seen", "Reconcile", fmt.Sprintf("size %d", w.Spec.Size))
		return reconciler.Done(), nil
	})
	if _, err := ctrl.GetConfig(); err != nil {
		fmt.Println("no cluster:", err)
		return
	}
	err := kopcontroller.New[*widget.Widget]("widgets", r).
		Scheme(scheme).
		HealthPort(8081).
		MetricsPort(8080).
		LeaderElection("default", "widgets-leader").
		GracefulShutdown(30*time.Second).
		ReconcileTimeout(time.Minute).
		Concurrency(4).
		Owns(&appsv1.Deployment{}).
		Watch(&corev1.Secret{}, owners.LabelMapper("example.com/widget")).
		Run(ctrl.SetupSignalHandler())
	fmt.Println(err)
}

// A Sync controller in a manager of your own whose cache holds the whole
// of one namespace, where the children live: CompleteCache says so for the
// child kind, and a new child costs its apply alone instead of a live read
// of its name first. (Run needs no such line: it builds the manager.)
func ExampleBuilder_CompleteCache() {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Println("no cluster:", err)
		return
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{"shop": {}}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	sync := reconciler.Sync([]client.Object{&corev1.ConfigMap{}},
		func(_ context.Context, w *widget.Widget, _ reconciler.Children) ([]client.Object, reconciler.Action, error) {
			return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.Name}, Data: map[string]string{"size": fmt.Sprint(w.Spec.Size)}}},
				reconciler.Done(), nil
		})
	if err := kopcontroller.New[*widget.Widget]("widgets", sync).CompleteCache(&corev1.ConfigMap{}).Setup(mgr); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(mgr.Start(ctrl.SetupSignalHandler()))
}

// A Widget names, in an annotation, the Secret with its credentials. The
// controller reconciles each Widget when the Secret it names is created,
// changed or deleted; the Secret is watched metadata-only, and read with
// one get when a Widget needs it. A missing Secret stalls the Widget until
// it is created.
func ExampleBuilder_References() {
	const credentials = "example.com/credentials"
	r := reconciler.Func[*widget.Widget](func(ctx context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
		var s corev1.Secret
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Annotations[credentials]}, &s); err != nil {
			if apierrors.IsNotFound(err) {
				return reconciler.Done(), koperrors.Terminal(err) // Stalled until the Secret exists
			}
			return reconciler.Done(), err
		}
		// ... use s.Data["token"] ...
		return reconciler.Done(), nil
	})
	if _, err := ctrl.GetConfig(); err != nil {
		fmt.Println("no cluster:", err)
		return
	}
	err := kopcontroller.New[*widget.Widget]("widgets", r).
		Scheme(scheme).
		References(&corev1.Secret{}, func(w *widget.Widget) []string { return []string{w.Annotations[credentials]} }).
		Run(ctrl.SetupSignalHandler())
	fmt.Println(err)
}

// WidgetReconciler is a plain controller-runtime reconciler, as
// kubebuilder scaffolds one: main.go and suite_test.go construct it with a
// Client and a Scheme, and SetupWithManager gets kopgo's helpers.
type WidgetReconciler struct {
	client.Client
	Scheme *runtime.Scheme

	env *reconciler.Env // kopgo's helpers, from SetupWithManager
}

// SetupWithManager builds kopgo's helpers from the manager, then the
// controller. The Applier reads ConfigMaps, which the controller owns (and
// so watches), from the cache.
func (r *WidgetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	env, err := kopcontroller.EnvFor(mgr, "widget-controller", kopcontroller.WithCachedKinds(&corev1.ConfigMap{}))
	if err != nil {
		return err
	}
	r.env = env
	return ctrl.NewControllerManagedBy(mgr).For(&widget.Widget{}).Owns(&corev1.ConfigMap{}).Named("widget").Complete(r)
}

// Reconcile applies one ConfigMap per Widget and records the outcome in
// the Widget's conditions.
func (r *WidgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var w widget.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	p := status.NewPatcher(&w)
	cm := corev1ac.ConfigMap(w.Name, w.Namespace).WithData(map[string]string{"size": fmt.Sprint(w.Spec.Size)})
	ref, err := owners.ControllerApplyConfiguration(&w, cm, r.Scheme)
	if err == nil {
		var res apply.Result
		if res, err = r.env.Applier.Apply(ctx, cm.WithOwnerReferences(ref)); err == nil && res.Outcome == apply.Created {
			r.env.Recorder.Normal(&w, res.Object(), "Created", "Apply", "Created ConfigMap "+w.Name)
		}
	}
	status.SetError(&w, err) // Ready=True, or Ready=False / Stalled=True naming the error
	if _, perr := p.Patch(ctx, r.env.Client, &w); perr != nil {
		return ctrl.Result{}, errors.Join(err, perr)
	}
	return reconciler.Result(reconciler.Done(), err)
}

// A kubebuilder main.go, unchanged: the reconciler gets kopgo's helpers in
// its SetupWithManager. It runs against the cluster in KUBECONFIG until
// SIGTERM.
func ExampleEnvFor() {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Println("no cluster:", err)
		return
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := (&WidgetReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme()}).SetupWithManager(mgr); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(mgr.Start(ctrl.SetupSignalHandler()))
}

package controller_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/kopgo/kopgo/apply"
	kopcontroller "github.com/kopgo/kopgo/controller"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/owners"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// plainReconciler is a plain controller-runtime reconciler, as kubebuilder
// scaffolds one (a Client, constructed in main.go or suite_test.go without
// anything kopgo needs), that gets kopgo's helpers in SetupWithManager.
type plainReconciler struct {
	client.Client

	env *reconciler.Env
	mu  sync.Mutex
	// requests of the last reconcile's applies, by kind
	requests map[string]int
	runs     int
}

const plainOwner = "plain-widgets"

func (r *plainReconciler) SetupWithManager(mgr ctrl.Manager, label string) error {
	env, err := kopcontroller.EnvFor(mgr, plainOwner, kopcontroller.WithCachedKinds(&corev1.ConfigMap{}))
	if err != nil {
		return err
	}
	r.env = env
	return ctrl.NewControllerManagedBy(mgr).
		For(&widget.Widget{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()["env"] == label }))).
		Owns(&corev1.ConfigMap{}).
		Named("plain-widgets").
		Complete(r)
}

func (r *plainReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var w widget.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	p := status.NewPatcher(&w)
	requests, err := r.applyChildren(ctx, &w)
	status.SetError(&w, err)
	// No client.FieldOwner: the Env's client writes as the field owner.
	if _, perr := p.Patch(ctx, r.env.Client, &w); perr != nil {
		return ctrl.Result{}, errors.Join(err, perr)
	}
	r.mu.Lock()
	r.requests, r.runs = requests, r.runs+1
	r.mu.Unlock()
	return reconciler.Result(reconciler.Done(), err)
}

// applyChildren applies a ConfigMap the widget controls (a watched kind)
// and a Secret (a kind the controller may only create and patch).
func (r *plainReconciler) applyChildren(ctx context.Context, w *widget.Widget) (map[string]int, error) {
	cm := corev1ac.ConfigMap(w.Name, w.Namespace).WithData(map[string]string{"size": fmt.Sprint(w.Spec.Size)})
	ref, err := owners.ControllerApplyConfiguration(w, cm, r.env.Scheme)
	if err != nil {
		return nil, err
	}
	secret := corev1ac.Secret(w.Name, w.Namespace).WithStringData(map[string]string{"size": fmt.Sprint(w.Spec.Size)}).WithType(corev1.SecretTypeOpaque)
	requests := map[string]int{}
	for kind, obj := range map[string]any{"ConfigMap": cm.WithOwnerReferences(ref), "Secret": secret} {
		res, err := r.env.Applier.Apply(ctx, obj)
		if err != nil {
			return nil, err
		}
		requests[kind] = res.Requests
		if res.Outcome == apply.Created {
			r.env.Recorder.Normal(w, res.Object(), "Created", "Apply", "Created "+kind)
		}
	}
	return requests, nil
}

func (r *plainReconciler) last() (map[string]int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, r.runs
}

// EnvFor gives a plain controller-runtime reconciler kopgo's helpers: a
// client that writes as the field owner, an Applier that reads the kinds
// it was told the controller watches from the cache (an unchanged
// ConfigMap costs no request) and applies any other kind without reading
// it (a Secret the controller may not list or watch is applied at once,
// with one request, instead of waiting on an informer that never syncs),
// and a recorder that reports as the field owner.
func TestEnvForPlainReconciler(t *testing.T) {
	ns := cluster.Namespace(t)
	user := "plain-" + ns
	grant(t, user, []rbacv1.PolicyRule{
		{APIGroups: []string{widget.GroupVersion.Group}, Resources: []string{"widgets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{widget.GroupVersion.Group}, Resources: []string{"widgets/status"}, Verbs: []string{"patch"}},
		{APIGroups: []string{widget.GroupVersion.Group}, Resources: []string{"widgets/finalizers"}, Verbs: []string{"update"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch", "create", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{eventsv1.GroupName}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	})
	cfg, err := cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     scheme,
		Logger:     testr.New(t),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller: config.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &plainReconciler{Client: mgr.GetClient()}
	if err := r.SetupWithManager(mgr, ns); err != nil {
		t.Fatal(err)
	}
	startManager(t, mgr)

	c := cluster.Client()
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w", Labels: map[string]string{"env": ns}}, Spec: widget.WidgetSpec{Size: 3}}
	if err := c.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "Ready=True", readyIs(t, w, metav1.ConditionTrue, ""))

	t.Log("status, ConfigMap and Secret are written as the field owner")
	got := getWidget(t, w)
	if !managedBy(got, plainOwner, "status") {
		t.Errorf("Widget's status not applied by %s: %+v", plainOwner, got.ManagedFields)
	}
	for _, obj := range []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}} {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "w"}, obj); err != nil {
			t.Fatal(err)
		}
		if !managedBy(obj, plainOwner, "") {
			t.Errorf("%T not applied by %s: %+v", obj, plainOwner, obj.GetManagedFields())
		}
	}

	t.Log("events report as the field owner")
	eventually(t, 30*time.Second, "Created events", func() error {
		var events eventsv1.EventList
		if err := c.List(t.Context(), &events, client.InNamespace(ns)); err != nil {
			return err
		}
		var notes []string
		for _, e := range events.Items {
			if e.ReportingController != plainOwner {
				return fmt.Errorf("event %q reported by %q, want %q", e.Note, e.ReportingController, plainOwner)
			}
			notes = append(notes, e.Note)
		}
		slices.Sort(notes)
		if !slices.Equal(notes, []string{"Created ConfigMap", "Created Secret"}) {
			return fmt.Errorf("events %q", notes)
		}
		return nil
	})

	t.Log("a reconcile of an unchanged widget: the cached ConfigMap costs nothing, the Secret one request")
	_, before := r.last()
	got.Labels["touched"] = "yes"
	if err := c.Update(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "another reconcile", func() error {
		if _, runs := r.last(); runs <= before {
			return fmt.Errorf("%d reconciles", runs)
		}
		return nil
	})
	requests, _ := r.last()
	if requests["ConfigMap"] != 0 || requests["Secret"] != 1 {
		t.Errorf("requests %v, want ConfigMap 0 (read from the cache) and Secret 1 (not a cached kind)", requests)
	}
}

// managedBy reports whether obj has a managedFields entry of manager for
// subresource ("" for the object itself) written by server-side apply.
func managedBy(obj client.Object, manager, subresource string) bool {
	return slices.ContainsFunc(obj.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == manager && e.Subresource == subresource && e.Operation == metav1.ManagedFieldsOperationApply
	})
}

// newManager returns a manager with a cluster-wide cache on the test
// cluster, its metrics server off, for a Builder's Setup.
func newManager(t *testing.T) manager.Manager {
	t.Helper()
	mgr, err := manager.New(cluster.Config, manager.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// startManager runs mgr until the test ends.
func startManager(t *testing.T, mgr manager.Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// EnvFor's mistakes are Config errors, never panics; its options reach
// the Env.
func TestEnvForOptionsAndMistakes(t *testing.T) {
	mgr, err := ctrl.NewManager(cluster.Config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	type notRegistered struct{ corev1.ConfigMap }
	for _, tc := range []struct {
		name       string
		mgr        manager.Manager
		fieldOwner string
		opts       []kopcontroller.EnvOption
	}{
		{"nil manager", nil, "x", nil},
		{"no field owner", mgr, "", nil},
		{"a cached kind the scheme does not know", mgr, "x", []kopcontroller.EnvOption{kopcontroller.WithCachedKinds(&notRegistered{})}},
		{"a complete kind the scheme does not know", mgr, "x", []kopcontroller.EnvOption{kopcontroller.WithCompleteCache(&notRegistered{})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, err := kopcontroller.EnvFor(tc.mgr, tc.fieldOwner, tc.opts...)
			if env != nil || koperrors.KindOf(err) != koperrors.Config {
				t.Errorf("EnvFor = %v, %v; want nil and an error of Kind Config", env, err)
			}
		})
	}

	fake := &observability.FakeRecorder{}
	reg := prometheus.NewRegistry()
	metrics, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	env, err := kopcontroller.EnvFor(mgr, "owner", kopcontroller.WithRecorder(fake), kopcontroller.WithName("name"), kopcontroller.WithMetrics(metrics))
	if err != nil {
		t.Fatal(err)
	}
	if env.Recorder != observability.Recorder(fake) || env.Scheme != scheme || env.Reader == nil || env.Client == nil {
		t.Errorf("Env %+v: want the given recorder, the manager's scheme, a reader and a client", env)
	}
	if len(env.CompleteKinds) != 0 {
		t.Errorf("Env.CompleteKinds = %v without WithCompleteCache, want none: a Syncer reads new children live", env.CompleteKinds)
	}
	declared, err := kopcontroller.EnvFor(mgr, "owner", kopcontroller.WithRecorder(fake), kopcontroller.WithMetrics(metrics),
		kopcontroller.WithCompleteCache(&corev1.ConfigMap{}, &corev1.Secret{}), kopcontroller.WithCompleteCache(&corev1.ConfigMap{}))
	if err != nil {
		t.Fatal(err)
	}
	if want := []schema.GroupKind{{Kind: "ConfigMap"}, {Kind: "Secret"}}; !slices.Equal(declared.CompleteKinds, want) {
		t.Errorf("Env.CompleteKinds = %v, want %v", declared.CompleteKinds, want)
	}
	if got := env.Applier.FieldOwner(); got != "owner" {
		t.Errorf("Applier's field owner %q, want %q", got, "owner")
	}
	// The Applier counts in the given Metrics, under the given name (the
	// manager never started: no cache, the apply is sent).
	ns := cluster.Namespace(t)
	if _, err := env.Applier.Apply(t.Context(), corev1ac.ConfigMap("counted", ns)); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var counted []string
	for _, f := range families {
		if f.GetName() != "kopgo_apply_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			counted = append(counted, fmt.Sprintf("%s %v", strings.Join(labels, ","), m.GetCounter().GetValue()))
		}
	}
	if want := []string{"controller=name,outcome=created 1"}; !slices.Equal(counted, want) {
		t.Errorf("kopgo_apply_total in the given registry: %q, want %q", counted, want)
	}
}

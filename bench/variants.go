package main

import (
	"context"
	"fmt"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kopgo/kopgo/owners"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/widget"
)

// The workload: every Widget has three children named after it, each
// carrying the Widget's spec.size, and a status with a Ready condition and
// observedGeneration. The Services are headless, as in every earlier run,
// so that the figures stay comparable (the testkit's service range, a /24
// then, is a /16 now).

// sizeKey is the ConfigMap and Secret key that holds the size.
const sizeKey = "size"

// port is the Service port of a Widget of the given size.
func port(size int64) int32 { return int32(8000 + size%1000) }

// sizeOf reads the size a child carries; ok is false for an object that is
// not one of the children.
func sizeOf(obj client.Object) (string, bool) {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		v, ok := o.Data[sizeKey]
		return v, ok
	case *corev1.Secret:
		v, ok := o.Data[sizeKey]
		return string(v), ok
	case *corev1.Service:
		if len(o.Spec.Ports) == 0 {
			return "", false
		}
		return strconv.FormatInt(int64(o.Spec.Ports[0].Port)-8000, 10), true
	}
	return "", false
}

// wantValue is what sizeOf returns for the children of a Widget of the
// given size.
func wantValue(size int64) string { return strconv.FormatInt(size%1000, 10) }

// childObjects are the children as typed objects (E's sync function returns
// them; A creates them).
func childObjects(w *widget.Widget) []client.Object {
	size := strconv.FormatInt(w.Spec.Size, 10)
	meta := func() metav1.ObjectMeta { return metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace} }
	return []client.Object{
		&corev1.ConfigMap{ObjectMeta: meta(), Data: map[string]string{sizeKey: size}},
		&corev1.Secret{ObjectMeta: meta(), Data: map[string][]byte{sizeKey: []byte(size)}},
		&corev1.Service{ObjectMeta: meta(), Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  map[string]string{"app": w.Name},
			// TargetPort spelled out: a typed zero IntOrString is sent as
			// targetPort: 0, which the server defaults to the port, so the
			// child would never prove unchanged after a restart.
			Ports: []corev1.ServicePort{{Name: "http", Port: port(w.Spec.Size), TargetPort: intstr.FromInt32(port(w.Spec.Size))}},
		}},
	}
}

// childApplyConfigurations are the children as apply configurations with a
// controller reference to w (C and D apply them).
func childApplyConfigurations(w *widget.Widget, scheme *runtime.Scheme) ([]runtime.ApplyConfiguration, error) {
	size := strconv.FormatInt(w.Spec.Size, 10)
	cm := corev1ac.ConfigMap(w.Name, w.Namespace).WithData(map[string]string{sizeKey: size})
	secret := corev1ac.Secret(w.Name, w.Namespace).WithData(map[string][]byte{sizeKey: []byte(size)})
	svc := corev1ac.Service(w.Name, w.Namespace).WithSpec(corev1ac.ServiceSpec().
		WithClusterIP(corev1.ClusterIPNone).WithSelector(map[string]string{"app": w.Name}).
		WithPorts(corev1ac.ServicePort().WithName("http").WithPort(port(w.Spec.Size))))
	for _, child := range []runtime.ApplyConfiguration{cm, secret, svc} {
		ref, err := owners.ControllerApplyConfiguration(w, child, scheme)
		if err != nil {
			return nil, err
		}
		switch c := child.(type) {
		case *corev1ac.ConfigMapApplyConfiguration:
			c.WithOwnerReferences(ref)
		case *corev1ac.SecretApplyConfiguration:
			c.WithOwnerReferences(ref)
		case *corev1ac.ServiceApplyConfiguration:
			c.WithOwnerReferences(ref)
		}
	}
	return []runtime.ApplyConfiguration{cm, secret, svc}, nil
}

// ---------------------------------------------------------------------------
// B: the idiomatic kubebuilder reconciler, as kubebuilder's tutorial writes
// it: Get, controllerutil.CreateOrUpdate per child with
// SetControllerReference in the mutate function, then the Ready condition
// with meta.SetStatusCondition and an unconditional Status().Update.

// kubebuilderReconciler reconciles a Widget the kubebuilder way.
type kubebuilderReconciler struct {
	client.Client
	Scheme *runtime.Scheme
}

func (r *kubebuilderReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var w widget.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	size := strconv.FormatInt(w.Spec.Size, 10)

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{sizeKey: size}
		return controllerutil.SetControllerReference(&w, cm, r.Scheme)
	}); err != nil {
		return ctrl.Result{}, err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, secret, func() error {
		secret.Data = map[string][]byte{sizeKey: []byte(size)}
		return controllerutil.SetControllerReference(&w, secret, r.Scheme)
	}); err != nil {
		return ctrl.Result{}, err
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, svc, func() error {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
		svc.Spec.Selector = map[string]string{"app": w.Name}
		// Protocol and TargetPort spelled out as the server defaults them,
		// or every reconcile would Update the Service.
		p := port(w.Spec.Size)
		svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: p, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(p)}}
		return controllerutil.SetControllerReference(&w, svc, r.Scheme)
	}); err != nil {
		return ctrl.Result{}, err
	}

	apimeta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
		Type: "Ready", Status: metav1.ConditionTrue, Reason: "Reconciled",
		Message: "children created", ObservedGeneration: w.Generation,
	})
	w.Status.ObservedGeneration = w.Generation
	if err := r.Status().Update(ctx, &w); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// ---------------------------------------------------------------------------
// C: a careful hand-written reconciler: reads the parent and the children
// from the cache, applies a child (server-side apply) only when it differs
// from what it wants, and patches status only when it changed.

// carefulReconciler reconciles a Widget with as few requests as it can.
type carefulReconciler struct {
	client.Client
	Scheme     *runtime.Scheme
	FieldOwner string
}

func (r *carefulReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var w widget.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !w.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	wanted := childObjects(&w)
	acs, err := childApplyConfigurations(&w, r.Scheme)
	if err != nil {
		return ctrl.Result{}, err
	}
	for i, want := range wanted {
		live := want.DeepCopyObject().(client.Object)
		err := r.Get(ctx, client.ObjectKeyFromObject(want), live)
		if err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		if err == nil && sameChild(live, want, &w) {
			continue
		}
		if err := r.Apply(ctx, acs[i], client.FieldOwner(r.FieldOwner), client.ForceOwnership); err != nil {
			return ctrl.Result{}, fmt.Errorf("apply %T %s: %w", want, want.GetName(), err)
		}
	}

	before := w.DeepCopyObject().(*widget.Widget)
	apimeta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
		Type: "Ready", Status: metav1.ConditionTrue, Reason: "Reconciled",
		Message: "children applied", ObservedGeneration: w.Generation,
	})
	w.Status.ObservedGeneration = w.Generation
	if w.Status.ObservedGeneration != before.Status.ObservedGeneration || !sameConditions(w.Status.Conditions, before.Status.Conditions) {
		if err := r.Status().Patch(ctx, &w, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// sameChild reports whether the live child carries what want asks for and
// is controlled by w.
func sameChild(live, want client.Object, w *widget.Widget) bool {
	if ref := metav1.GetControllerOf(live); ref == nil || ref.UID != w.UID {
		return false
	}
	switch l := live.(type) {
	case *corev1.ConfigMap:
		return maps.Equal(l.Data, want.(*corev1.ConfigMap).Data)
	case *corev1.Secret:
		return maps.EqualFunc(l.Data, want.(*corev1.Secret).Data, func(a, b []byte) bool { return string(a) == string(b) })
	case *corev1.Service:
		ws := want.(*corev1.Service)
		return l.Spec.ClusterIP == ws.Spec.ClusterIP && maps.Equal(l.Spec.Selector, ws.Spec.Selector) && len(l.Spec.Ports) == 1 &&
			l.Spec.Ports[0].Name == ws.Spec.Ports[0].Name && l.Spec.Ports[0].Port == ws.Spec.Ports[0].Port
	}
	return false
}

func sameConditions(a, b []metav1.Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			x.ObservedGeneration != y.ObservedGeneration || !x.LastTransitionTime.Equal(&y.LastTransitionTime) {
			return false
		}
	}
	return true
}

// setupPlain registers a controller-runtime reconciler for Widgets and their
// three child kinds, as kubebuilder's SetupWithManager does.
func setupPlain(mgr ctrl.Manager, name string, r reconcile.Reconciler) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&widget.Widget{}).
		Owns(&corev1.ConfigMap{}).
		Owns(&corev1.Secret{}).
		Owns(&corev1.Service{}).
		Named(name).
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// ---------------------------------------------------------------------------
// D: kopgo's Reconciler with the Applier. The framework reads the Widget,
// sets Ready and observedGeneration, and writes status only when it changed.

// widgetReconciler applies a Widget's children.
type widgetReconciler struct{}

func (widgetReconciler) Reconcile(ctx context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
	children, err := childApplyConfigurations(w, env.Scheme)
	if err != nil {
		return reconciler.Done(), err
	}
	for _, child := range children {
		if _, err := env.Applier.Apply(ctx, child); err != nil {
			return reconciler.Done(), err
		}
	}
	return reconciler.Done(), nil
}

// ---------------------------------------------------------------------------
// E: reconciler.Sync: the sync function returns the three children.

func syncReconciler() *reconciler.Syncer[*widget.Widget] {
	return reconciler.Sync([]client.Object{&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Service{}},
		func(_ context.Context, w *widget.Widget, _ reconciler.Children) ([]client.Object, reconciler.Action, error) {
			return childObjects(w), reconciler.Done(), nil
		})
}

// ---------------------------------------------------------------------------
// A: the raw-write floor: a plain client writes (server-side applies) the
// children and the status of one Widget, no reads, no cache.

func rawWrite(ctx context.Context, c client.Client, w *widget.Widget) error {
	if err := rawChange(ctx, c, w); err != nil {
		return err
	}
	apimeta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
		Type: "Ready", Status: metav1.ConditionTrue, Reason: "Reconciled", ObservedGeneration: w.Generation,
	})
	w.Status.ObservedGeneration = w.Generation
	return c.Status().Update(ctx, w)
}

// rawChange applies the children of w: one request each.
func rawChange(ctx context.Context, c client.Client, w *widget.Widget) error {
	acs, err := childApplyConfigurations(w, c.Scheme())
	if err != nil {
		return err
	}
	for _, ac := range acs {
		if err := c.Apply(ctx, ac, client.FieldOwner("bench-a"), client.ForceOwnership); err != nil {
			return err
		}
	}
	return nil
}

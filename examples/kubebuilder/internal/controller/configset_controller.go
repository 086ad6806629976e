package controller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/kopgo/kopgo/apply"
	kopcontroller "github.com/kopgo/kopgo/controller"
	koperrors "github.com/kopgo/kopgo/errors"
	kubebuilderv1 "github.com/kopgo/kopgo/examples/kubebuilder/api/v1"
	"github.com/kopgo/kopgo/finalizers"
	"github.com/kopgo/kopgo/gc"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/owners"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
)

const (
	// FieldOwner is the field manager of the ConfigMaps and of the
	// ConfigSets' status.
	FieldOwner = "configset-controller"
	// Finalizer is the ConfigSet controller's finalizer.
	Finalizer = "kubebuilder.examples.kopgo.dev/cleanup"
	// ConfigSetLabel is the label that names a ConfigMap's ConfigSet. Prune
	// looks for ConfigMaps to delete among those that carry it.
	ConfigSetLabel = "kubebuilder.examples.kopgo.dev/configset"
)

var configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")

// ConfigSetReconciler reconciles a ConfigSet: one ConfigMap per entry of its
// spec.configs, applied with server-side apply, and none for entries that
// were removed.
//
// It is constructed as kubebuilder scaffolds it, with a Client and a
// Scheme (cmd/main.go and suite_test.go do); SetupWithManager adds kopgo's
// helpers.
type ConfigSetReconciler struct {
	client.Client
	Scheme *runtime.Scheme

	// env holds kopgo's helpers, built from the manager in
	// SetupWithManager: a client that writes as FieldOwner, an Applier, an
	// event recorder.
	env *reconciler.Env
}

// The permissions the controller needs, and no more (the test runs it with
// only these): patch on configsets for the finalizer and on
// configsets/status for the status; create and patch on configmaps for
// server-side apply (an apply that creates is authorized as both); update
// on configsets/finalizers lets the ConfigMaps' controller reference set
// blockOwnerDeletion.
//
// +kubebuilder:rbac:groups=kubebuilder.examples.kopgo.dev,resources=configsets,verbs=list;watch;patch
// +kubebuilder:rbac:groups=kubebuilder.examples.kopgo.dev,resources=configsets/status,verbs=patch
// +kubebuilder:rbac:groups=kubebuilder.examples.kopgo.dev,resources=configsets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings the ConfigMaps of one ConfigSet in line with its spec and
// reports the outcome in its status.
func (r *ConfigSetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if r.env == nil {
		return ctrl.Result{}, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "ConfigSetReconciler: SetupWithManager was not called"))
	}
	var cs kubebuilderv1.ConfigSet
	if err := r.Get(ctx, req.NamespacedName, &cs); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	if kopmeta.IsBeingDeleted(&cs) {
		return ctrl.Result{}, r.finalize(ctx, &cs)
	}
	// No request when the finalizer is there already. kopgo's errors name
	// the operation and the object: "add finalizer ConfigSet <ns>/<name>: ...".
	if _, err := finalizers.Add(ctx, r.env.Client, &cs, Finalizer); err != nil {
		return ctrl.Result{}, err
	}

	// ConfigSet has no condition methods: an accessor gives kopgo's status
	// package its conditions and observedGeneration.
	s := status.Access(&cs, &cs.Status.Conditions).WithObservedGeneration(&cs.Status.ObservedGeneration)
	p := status.NewPatcher(&cs) // the status as read: Patch compares with it
	read := status.Begin(s)
	var n int32
	var err error
	if errs := validate(&cs); len(errs) > 0 {
		// Retrying cannot fix the spec: Stalled until it changes, with
		// every bad field named ("spec.configs[0].data[a=b]: ...").
		err = koperrors.Terminal(koperrors.WrapKind(koperrors.Invalid, errs.ToAggregate(), "validate", kopmeta.RefOf(&cs)))
	} else if n, err = r.reconcileConfigMaps(ctx, &cs); err == nil {
		cs.Status.ConfigMaps = n
		status.MarkReady(s, "Applied", fmt.Sprintf("%d ConfigMaps applied", n))
	}
	// Ready=True (with the reason above), Ready=False and Reconciling=True
	// for an error worth retrying, Stalled=True for a terminal one;
	// observedGeneration once the generation is settled.
	status.Finish(s, read, err)
	// One server-side apply of the whole status as FieldOwner, or no
	// request at all when nothing changed.
	if _, perr := p.Patch(ctx, r.env.Client, &cs); perr != nil {
		return ctrl.Result{}, errors.Join(err, perr)
	}
	// kopgo's outcomes in controller-runtime's terms: a koperrors.Terminal
	// error is controller-runtime's terminal error too (controller-runtime
	// stops retrying); a requeue asked with reconciler.RequeueAfter waits
	// as asked, never an error.
	return reconciler.Result(reconciler.Done(), err)
}

// reconcileConfigMaps applies one ConfigMap per entry, deletes those of
// removed entries, and returns how many ConfigMaps the ConfigSet has.
func (r *ConfigSetReconciler) reconcileConfigMaps(ctx context.Context, cs *kubebuilderv1.ConfigSet) (int32, error) {
	label, err := owners.OwnerLabel(ConfigSetLabel, cs)
	if err != nil { // a name longer than a label value: retrying cannot help
		return 0, koperrors.Terminal(fmt.Errorf("label ConfigMaps of ConfigSet %s: %w", cs.Name, err))
	}
	cms, err := configMaps(cs, label, r.Scheme)
	if err != nil {
		return 0, err
	}
	desired := make([]kopmeta.ObjectRef, 0, len(cms))
	for _, cm := range cms {
		res, err := r.env.Applier.Apply(ctx, cm)
		if err != nil {
			return 0, err // "apply ConfigMap <ns>/<name>: ..."
		}
		// The ConfigMap is the event's related object: events about
		// different ConfigMaps never fold into one series.
		switch res.Outcome {
		case apply.Created:
			r.env.Recorder.Normal(cs, res.Object(), "Created", "Apply", "Created ConfigMap "+*cm.Name)
		case apply.Updated:
			r.env.Recorder.Normal(cs, res.Object(), "Updated", "Apply", "Updated ConfigMap "+*cm.Name)
		}
		desired = append(desired, kopmeta.ObjectRef{Kind: configMapGVK.Kind, Namespace: *cm.Namespace, Name: *cm.Name})
	}

	// Delete the ConfigMaps this ConfigSet controls and no longer wants; any
	// other ConfigMap, labelled or not, is left alone.
	res, err := gc.Prune(ctx, r.Client, cs, labels.SelectorFromSet(label),
		[]schema.GroupVersionKind{configMapGVK}, desired)
	for _, ref := range res.Deleted {
		r.env.Recorder.Normal(cs, nil, "Pruned", "Delete", "Deleted ConfigMap "+ref.Name)
	}
	if err != nil {
		return 0, fmt.Errorf("prune ConfigMaps of ConfigSet %s: %w", cs.Name, err)
	}
	return int32(len(desired)), nil
}

// configMaps returns the ConfigMaps cs wants, one per entry, as apply
// configurations: named "<configset>-<entry>", carrying label (the
// ConfigSet's [owners.OwnerLabel]), controlled by cs. For a ConfigSet that
// validate accepts, the API server accepts them.
func configMaps(cs *kubebuilderv1.ConfigSet, label map[string]string, scheme *runtime.Scheme) ([]*corev1ac.ConfigMapApplyConfiguration, error) {
	cms := make([]*corev1ac.ConfigMapApplyConfiguration, 0, len(cs.Spec.Configs))
	for _, entry := range cs.Spec.Configs {
		cm := corev1ac.ConfigMap(cs.Name+"-"+entry.Name, cs.Namespace).
			WithLabels(label).
			WithData(entry.Data)
		ref, err := owners.ControllerApplyConfiguration(cs, cm, scheme)
		if err != nil {
			return nil, err // "controller reference ConfigMap <ns>/<name>: ..."
		}
		cms = append(cms, cm.WithOwnerReferences(ref))
	}
	return cms, nil
}

// finalize runs the cleanup of a ConfigSet being deleted, then removes the
// controller's finalizer, and only that one.
//
// A ConfigSet's ConfigMaps need no finalizer: their controller references
// let the garbage collector delete them. A finalizer is for what owner
// references cannot reach (state outside the cluster, objects in other
// namespaces); this one stands in for such a cleanup and records an event.
func (r *ConfigSetReconciler) finalize(ctx context.Context, cs *kubebuilderv1.ConfigSet) error {
	if !finalizers.Has(cs, Finalizer) {
		return nil // another controller's finalizer holds it: not ours to wait for
	}
	r.env.Recorder.Normal(cs, nil, "Finalized", "Cleanup", "Cleaned up ConfigSet "+cs.Name)
	_, err := finalizers.Remove(ctx, r.env.Client, cs, Finalizer)
	return err
}

// SetupWithManager builds kopgo's helpers from mgr and registers the
// reconciler with it: it reconciles ConfigSets and the ConfigMaps they
// control. The Applier reads ConfigMaps, which the controller watches
// (Owns), from the manager's cache: an unchanged ConfigMap costs no
// request.
func (r *ConfigSetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	env, err := kopcontroller.EnvFor(mgr, FieldOwner, kopcontroller.WithCachedKinds(&corev1.ConfigMap{}))
	if err != nil {
		return err
	}
	r.env = env
	return ctrl.NewControllerManagedBy(mgr).
		// Only a new generation (a spec change, or the deletion) needs a
		// reconcile: the controller's own status writes do not.
		For(&kubebuilderv1.ConfigSet{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.ConfigMap{}).
		Named("configset").
		Complete(r)
}

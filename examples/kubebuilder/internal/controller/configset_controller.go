package controller

import (
	"context"
	"errors"
	"fmt"

	kopmeta "github.com/kopgo/kopgo/meta"

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
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/examples/kubebuilder/api/v1alpha1"
	"github.com/kopgo/kopgo/finalizers"
	"github.com/kopgo/kopgo/gc"
	"github.com/kopgo/kopgo/observability"
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
type ConfigSetReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Applier  *apply.Applier
	Recorder observability.Recorder
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
	var cs v1alpha1.ConfigSet
	if err := r.Get(ctx, req.NamespacedName, &cs); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	if kopmeta.IsBeingDeleted(&cs) {
		return ctrl.Result{}, r.finalize(ctx, &cs)
	}
	// No request when the finalizer is there already. kopgo's errors name
	// the operation and the object: "add finalizer ConfigSet <ns>/<name>: ...".
	if _, err := finalizers.Add(ctx, r.Client, &cs, Finalizer); err != nil {
		return ctrl.Result{}, err
	}

	p := status.NewPatcher(&cs) // the status as read: Patch compares with it
	var n int32
	var err error
	if errs := validate(&cs); len(errs) > 0 {
		// Retrying cannot fix the spec: Stalled until it changes, with
		// every bad field named ("spec.configs[0].data[a=b]: ...").
		err = koperrors.Terminal(koperrors.WrapKind(koperrors.Invalid, errs.ToAggregate(), "validate", kopmeta.RefOf(&cs)))
	} else {
		n, err = r.reconcileConfigMaps(ctx, &cs)
	}
	if err != nil {
		status.SetError(&cs, err) // Ready=False, or Stalled=True for a terminal error
	} else {
		cs.Status.ConfigMaps = n
		status.MarkReady(&cs, "Applied", fmt.Sprintf("%d ConfigMaps applied", n))
		status.SetObservedGeneration(&cs)
	}
	// One server-side apply of the whole status, or no request at all when
	// nothing changed.
	if _, perr := p.Patch(ctx, r.Client, &cs, client.FieldOwner(FieldOwner)); perr != nil {
		return ctrl.Result{}, errors.Join(err, perr)
	}
	// kopgo's outcomes in controller-runtime's terms: a koperrors.Terminal
	// error is controller-runtime's terminal error too (SetError reported
	// it as Stalled, and controller-runtime stops retrying); a requeue
	// asked with reconciler.RequeueAfter waits as asked, never an error.
	return reconciler.Result(reconciler.Done(), err)
}

// reconcileConfigMaps applies one ConfigMap per entry, deletes those of
// removed entries, and returns how many ConfigMaps the ConfigSet has.
func (r *ConfigSetReconciler) reconcileConfigMaps(ctx context.Context, cs *v1alpha1.ConfigSet) (int32, error) {
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
		res, err := r.Applier.Apply(ctx, cm)
		if err != nil {
			return 0, err // "apply ConfigMap <ns>/<name>: ..."
		}
		// The ConfigMap is the event's related object: events about
		// different ConfigMaps never fold into one series.
		switch res.Outcome {
		case apply.Created:
			r.Recorder.Normal(cs, res.Object(), "Created", "Apply", "Created ConfigMap "+*cm.Name)
		case apply.Updated:
			r.Recorder.Normal(cs, res.Object(), "Updated", "Apply", "Updated ConfigMap "+*cm.Name)
		}
		desired = append(desired, kopmeta.ObjectRef{Kind: configMapGVK.Kind, Namespace: *cm.Namespace, Name: *cm.Name})
	}

	// Delete the ConfigMaps this ConfigSet controls and no longer wants; any
	// other ConfigMap, labelled or not, is left alone.
	res, err := gc.Prune(ctx, r.Client, cs, labels.SelectorFromSet(label),
		[]schema.GroupVersionKind{configMapGVK}, desired)
	for _, ref := range res.Deleted {
		r.Recorder.Normal(cs, nil, "Pruned", "Delete", "Deleted ConfigMap "+ref.Name)
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
func configMaps(cs *v1alpha1.ConfigSet, label map[string]string, scheme *runtime.Scheme) ([]*corev1ac.ConfigMapApplyConfiguration, error) {
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
func (r *ConfigSetReconciler) finalize(ctx context.Context, cs *v1alpha1.ConfigSet) error {
	if !finalizers.Has(cs, Finalizer) {
		return nil // another controller's finalizer holds it: not ours to wait for
	}
	r.Recorder.Normal(cs, nil, "Finalized", "Cleanup", "Cleaned up ConfigSet "+cs.Name)
	_, err := finalizers.Remove(ctx, r.Client, cs, Finalizer)
	return err
}

// SetupWithManager registers the reconciler with mgr: it reconciles
// ConfigSets and the ConfigMaps they control.
func (r *ConfigSetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		// Only a new generation (a spec change, or the deletion) needs a
		// reconcile: the controller's own status writes do not, and a
		// reconcile on them, from a cache that lags behind, would write
		// the status again.
		For(&v1alpha1.ConfigSet{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.ConfigMap{}).
		Named("configset").
		Complete(r)
}

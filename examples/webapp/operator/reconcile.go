package operator

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
	webappv1 "github.com/kopgo/kopgo/examples/webapp/api/v1alpha1"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
)

// RBAC of the operator, generated into config/rbac by `make generate`. The
// end-to-end test runs the operator with exactly these rules and fails on a
// missing one (the WebApp never becomes Ready) and on an unused one.
// webapps/finalizers is never requested: the API server's
// OwnerReferencesPermissionEnforcement admission plugin checks it when a
// child's controller reference sets blockOwnerDeletion, as kopgo's do.
//
// +kubebuilder:rbac:groups=webapp.examples.kopgo.dev,resources=webapps,verbs=list;watch;patch
// +kubebuilder:rbac:groups=webapp.examples.kopgo.dev,resources=webapps/status,verbs=patch
// +kubebuilder:rbac:groups=webapp.examples.kopgo.dev,resources=webapps/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services;configmaps,verbs=list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=webapp-system
// +kubebuilder:rbac:groups="",resources=events,verbs=create,namespace=webapp-system

// Reconciler is the WebApp controller: it applies a ConfigMap, a Deployment
// and a Service for each WebApp, reports Ready from the Deployment's rollout,
// and records the app's URL in a registry ConfigMap in another namespace, an
// "external" resource that its finalizer cleans up.
type Reconciler struct {
	// RegistryNamespace holds the registry ConfigMap. It must exist.
	RegistryNamespace string
}

// Reconcile implements reconciler.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, app *webappv1.WebApp, env *reconciler.Env) (reconciler.Action, error) {
	if errs := validate(app); len(errs) > 0 {
		// Retrying cannot fix the spec: Stalled until the WebApp changes.
		return reconciler.Done(), koperrors.Terminal(koperrors.WrapKind(koperrors.Invalid, errs.ToAggregate(), "validate", kopmeta.RefOf(app)))
	}
	secrets, err := mountedSecrets(ctx, env.Client, app)
	if err != nil {
		return reconciler.Done(), err
	}

	cm, err := configMap(app, env.Scheme)
	if err != nil {
		return reconciler.Done(), err
	}
	svc, err := service(app, env.Scheme)
	if err != nil {
		return reconciler.Done(), err
	}
	dep, err := deployment(app, secrets, env.Scheme)
	if err != nil {
		return reconciler.Done(), err
	}
	// The ConfigMap first: the pods read it at start.
	for _, child := range []any{cm, svc} {
		if _, err := applyChild(ctx, app, env, child); err != nil {
			return reconciler.Done(), err
		}
	}
	res, err := applyChild(ctx, app, env, dep)
	if err != nil {
		return reconciler.Done(), err
	}
	var d appsv1.Deployment
	if err := res.Into(&d); err != nil {
		return reconciler.Done(), koperrors.Wrap(err, "read Deployment", kopmeta.RefOf(app))
	}
	if res.Outcome == apply.Updated && d.Generation > d.Status.ObservedGeneration {
		// A new spec the Deployment controller has not seen yet: ours.
		// (Updated alone may be the controller's own status write; see
		// the apply package on over-reporting.)
		env.Recorder.Normal(app, nil, "RollingOut", "Apply", fmt.Sprintf("Deployment %s generation %d: %d × %s", d.Name, d.Generation, replicas(app), app.Spec.Image))
	}
	url := fmt.Sprintf("http://%s.%s.svc:%d", app.Name, app.Namespace, port(app))
	if err := r.register(ctx, app, env, url); err != nil {
		return reconciler.Done(), err
	}

	app.Status.URL = url
	reportRollout(app, &d, env)
	return reconciler.Done(), nil
}

// applyChild applies one child and records its creation, or its repair
// after someone else changed it, in an event whose related object is the
// child.
func applyChild(ctx context.Context, app *webappv1.WebApp, env *reconciler.Env, child any) (apply.Result, error) {
	res, err := env.Applier.Apply(ctx, child)
	if err != nil {
		return res, err
	}
	if res.Outcome == apply.Unchanged {
		return res, nil
	}
	obj := res.Object()
	kind := obj.GetKind()
	if res.Outcome == apply.Created || kind != "Deployment" {
		env.Recorder.Normal(app, obj, kind+res.Outcome.String(), "Apply",
			fmt.Sprintf("%s %s %s", kind, obj.GetName(), strings.ToLower(res.Outcome.String())))
	}
	return res, nil
}

// mountedSecrets lists the metadata of the Secrets labelled for app, sorted
// by name.
func mountedSecrets(ctx context.Context, c client.Reader, app *webappv1.WebApp) ([]metav1.PartialObjectMetadata, error) {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := c.List(ctx, &list, client.InNamespace(app.Namespace), client.MatchingLabels{SecretLabel: app.Name}); err != nil {
		return nil, koperrors.Wrap(err, "list Secrets labelled "+SecretLabel+"="+app.Name, kopmeta.RefOf(app))
	}
	slices.SortFunc(list.Items, func(a, b metav1.PartialObjectMetadata) int { return strings.Compare(a.Name, b.Name) })
	return list.Items, nil
}

// reportRollout sets the status from the Deployment's readiness
// (status.ReadinessOf): Ready when every pod of the current template is
// available, Reconciling while it rolls out, Stalled when the rollout failed
// (its progress deadline passed).
func reportRollout(app *webappv1.WebApp, d *appsv1.Deployment, env *reconciler.Env) {
	if d.Status.ObservedGeneration >= d.Generation {
		app.Status.ReadyReplicas = d.Status.AvailableReplicas
	}
	switch r := status.ReadinessOf(d); r.State {
	case status.StateCurrent:
		wasReady := status.IsTrue(app, status.Ready)
		status.MarkReady(app, "Available", fmt.Sprintf("%s at %s", r.Message, app.Status.URL))
		if !wasReady {
			env.Recorder.Normal(app, nil, "RolledOut", "Rollout", fmt.Sprintf("%d pods of %s available", replicas(app), app.Spec.Image))
		}
	case status.StateFailed:
		status.MarkStalled(app, r.Reason, r.Message)
	default:
		status.MarkReconciling(app, "RollingOut", r.Message)
	}
}

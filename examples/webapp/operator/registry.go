package operator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
	webappv1 "github.com/kopgo/kopgo/examples/webapp/api/v1alpha1"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/reconciler"
)

// RegistryName is the ConfigMap, in Reconciler.RegistryNamespace, that lists
// every WebApp's URL under the key "<namespace>.<name>". It stands for an
// external system (DNS, a load balancer, a service catalogue) that must
// forget an app when the app is deleted: the reason for the finalizer.
const RegistryName = "webapp-registry"

// RegistryKey is the registry key of app.
func RegistryKey(app client.Object) string { return app.GetNamespace() + "." + app.GetName() }

// registryOwner is the field manager that owns app's entry. Each WebApp
// applies its own entry under its own manager, so concurrent reconciles of
// different apps never conflict, and applying an empty configuration under
// that manager removes exactly that entry: server-side apply deletes the
// fields a manager stops applying.
//
// A field manager has at most 128 characters, and a namespace and a name
// may together have more: a longer one is cut and ends with a hash of the
// whole, so it stays unique (and the same for the WebApp's whole life, its
// Cleanup included).
func registryOwner(app client.Object) string {
	owner := "webapp-registry/" + RegistryKey(app)
	if len(owner) <= maxFieldManager {
		return owner
	}
	sum := sha256.Sum256([]byte(owner))
	suffix := "-" + hex.EncodeToString(sum[:])[:16]
	return owner[:maxFieldManager-len(suffix)] + suffix
}

// maxFieldManager is the API server's limit on a field manager's length.
const maxFieldManager = 128

// register puts app's URL in the registry. The registry is one ConfigMap
// every app writes, under its own field manager, so its resourceVersion
// moves with every app's write and the Applier cannot prove an apply of it
// unchanged (the cache keeps only the controller's own managedFields
// entry). The cached registry answers instead: an entry already holding the
// URL costs no request, so a re-reconcile of every app (a watch relisted
// after an outage) sends nothing.
func (r *Reconciler) register(ctx context.Context, app *webappv1.WebApp, env *reconciler.Env, url string) error {
	var current corev1.ConfigMap
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: r.RegistryNamespace, Name: RegistryName}, &current)
	if err == nil && current.Data[RegistryKey(app)] == url {
		return nil
	}
	cm := corev1ac.ConfigMap(RegistryName, r.RegistryNamespace).WithData(map[string]string{RegistryKey(app): url})
	if _, err := env.Applier.Apply(ctx, cm, client.FieldOwner(registryOwner(app))); err != nil {
		return fmt.Errorf("register %s in ConfigMap %s/%s: %w", RegistryKey(app), r.RegistryNamespace, RegistryName, err)
	}
	return nil
}

// Cleanup implements reconciler.Finalizer: it removes app's registry entry.
// The children need no cleanup: their owner references let Kubernetes'
// garbage collector delete them.
func (r *Reconciler) Cleanup(ctx context.Context, app *webappv1.WebApp, env *reconciler.Env) (reconciler.Action, error) {
	var cm corev1ac.ConfigMapApplyConfiguration
	cm.WithAPIVersion("v1").WithKind("ConfigMap").WithName(RegistryName).WithNamespace(r.RegistryNamespace)
	res, err := env.Applier.Apply(ctx, &cm, client.FieldOwner(registryOwner(app)))
	if koperrors.KindOf(err) == koperrors.NotFound {
		return reconciler.Done(), nil // the registry's namespace is gone, and the entry with it
	}
	if err != nil {
		return reconciler.Done(), koperrors.Wrap(err, "remove registry entry "+RegistryKey(app), kopmeta.RefOf(app))
	}
	if res.Outcome != apply.Unchanged {
		env.Recorder.Normal(app, nil, "Deregistered", "Cleanup", fmt.Sprintf("removed %s from ConfigMap %s/%s", RegistryKey(app), r.RegistryNamespace, RegistryName))
	}
	return reconciler.Done(), nil
}

package database

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
	"github.com/kopgo/kopgo/examples/database/api/v1alpha1"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/reconciler"
)

// RegistryName is the ConfigMap, in Reconciler.RegistryNamespace, that
// lists every Database's endpoint under the key "<namespace>.<name>". It
// stands for an external system (a service catalogue, a DNS zone, a
// monitoring inventory) that must forget a Database when it is deleted:
// the reason for the Cleanup, and for the finalizer kopgo adds for it.
const RegistryName = "database-registry"

// RegistryKey is the registry key of db.
func RegistryKey(db client.Object) string { return db.GetNamespace() + "." + db.GetName() }

// Reconciler is the Database operator's reconciler: the Syncer that runs
// [Sync], embedded in a type of its own so that it can do what a sync
// function cannot, write to the registry, and clean that up on deletion.
// kopgo's controller Builder finds its hooks on its method set: Cleanup
// (reconciler.Finalizer) and, through the embedded Syncer, ChildKinds
// (reconciler.Owner, the child kinds it watches).
type Reconciler struct {
	*reconciler.Syncer[*v1alpha1.Database]
	// RegistryNamespace holds the registry ConfigMap. It must exist.
	RegistryNamespace string
}

// NewReconciler returns the Reconciler, with its registry in namespace.
func NewReconciler(registryNamespace string) *Reconciler {
	return &Reconciler{Syncer: reconciler.Sync(ChildKinds(), Sync), RegistryNamespace: registryNamespace}
}

// Reconcile implements reconciler.Reconciler: Sync, then the registry
// entry. A Database whose sync failed is not registered (yet).
func (r *Reconciler) Reconcile(ctx context.Context, db *v1alpha1.Database, env *reconciler.Env) (reconciler.Action, error) {
	action, err := r.Syncer.Reconcile(ctx, db, env)
	if err != nil {
		return action, err
	}
	return action, r.register(ctx, db, env)
}

// register puts db's endpoint in the registry, under a field manager of
// db's own (registryOwner), so that concurrent reconciles of different
// Databases never conflict and the Cleanup removes exactly db's entry.
//
// The cached registry answers first: an entry that already holds the
// endpoint costs no request. (The Applier cannot tell by itself: the
// cache keeps only the controller's own managedFields entry, not each
// Database's.) An entry someone removed by hand comes back on the
// Database's next reconcile.
func (r *Reconciler) register(ctx context.Context, db *v1alpha1.Database, env *reconciler.Env) error {
	endpoint := Endpoint(db)
	var current corev1.ConfigMap
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: r.RegistryNamespace, Name: RegistryName}, &current)
	if err == nil && current.Data[RegistryKey(db)] == endpoint {
		return nil
	}
	cm := corev1ac.ConfigMap(RegistryName, r.RegistryNamespace).WithData(map[string]string{RegistryKey(db): endpoint})
	res, err := env.Applier.Apply(ctx, cm, client.FieldOwner(registryOwner(db)))
	if err != nil {
		return koperrors.Wrap(err, fmt.Sprintf("register %s in ConfigMap %s/%s", RegistryKey(db), r.RegistryNamespace, RegistryName), kopmeta.RefOf(db))
	}
	if res.Outcome != apply.Unchanged {
		env.Recorder.Normal(db, nil, "Registered", "Register",
			fmt.Sprintf("%s = %s in ConfigMap %s/%s", RegistryKey(db), endpoint, r.RegistryNamespace, RegistryName))
	}
	return nil
}

// Cleanup implements reconciler.Finalizer: it removes db's registry entry
// by applying an empty configuration under db's field manager
// (server-side apply deletes the fields a manager stops applying). The
// children need no cleanup: the garbage collector deletes them, following
// their controller references, and the StatefulSet's claims with it.
func (r *Reconciler) Cleanup(ctx context.Context, db *v1alpha1.Database, env *reconciler.Env) (reconciler.Action, error) {
	var cm corev1ac.ConfigMapApplyConfiguration
	cm.WithAPIVersion("v1").WithKind("ConfigMap").WithName(RegistryName).WithNamespace(r.RegistryNamespace)
	res, err := env.Applier.Apply(ctx, &cm, client.FieldOwner(registryOwner(db)))
	if koperrors.KindOf(err) == koperrors.NotFound {
		return reconciler.Done(), nil // the registry's namespace is gone, and the entry with it
	}
	if err != nil {
		return reconciler.Done(), koperrors.Wrap(err, "remove registry entry "+RegistryKey(db), kopmeta.RefOf(db))
	}
	if res.Outcome != apply.Unchanged {
		env.Recorder.Normal(db, nil, "Deregistered", "Cleanup",
			fmt.Sprintf("removed %s from ConfigMap %s/%s", RegistryKey(db), r.RegistryNamespace, RegistryName))
	}
	return reconciler.Done(), nil
}

// registryOwner is the field manager of db's registry entry. A field
// manager has at most 128 characters, and a namespace and a name together
// may have more: a longer one is cut and ends with a hash of the whole, so
// it stays unique and the same for the Database's whole life.
func registryOwner(db client.Object) string {
	const maxFieldManager = 128
	owner := "database-registry/" + RegistryKey(db)
	if len(owner) <= maxFieldManager {
		return owner
	}
	sum := sha256.Sum256([]byte(owner))
	suffix := "-" + hex.EncodeToString(sum[:])[:16]
	return owner[:maxFieldManager-len(suffix)] + suffix
}

package migrate

import (
	"context"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// svmGVK is the in-tree StorageVersionMigration, GA in Kubernetes 1.37
// (storagemigration.k8s.io/v1, feature gate StorageVersionMigrator on by
// default; v1beta1 before, off by default).
var svmGVK = schema.GroupVersionKind{Group: "storagemigration.k8s.io", Version: "v1", Kind: "StorageVersionMigration"}

// svmStatus is the part of a StorageVersionMigration Run reads.
type svmStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// chooseMethod resolves Auto: the migrator where the API server serves
// its API.
func (m *migration) chooseMethod(_ context.Context) (Method, error) {
	if m.opts.Method == Write {
		return Write, nil
	}
	_, err := m.c.RESTMapper().RESTMapping(svmGVK.GroupKind(), svmGVK.Version)
	served := err == nil
	if err != nil && !apimeta.IsNoMatchError(err) {
		return "", fmt.Errorf("discover %s: %w", svmGVK.GroupVersion(), err)
	}
	switch {
	case served:
		return StorageVersionMigration, nil
	case m.opts.Method == StorageVersionMigration:
		return "", fmt.Errorf("the API server does not serve %s", svmGVK.GroupVersion())
	default:
		return Write, nil
	}
}

// svmName is the StorageVersionMigration for this CRD, storage version
// and generation: a second Run for the same upgrade finds the first's.
func (m *migration) svmName() string {
	name := m.info.name + "-" + m.info.storage + "-g" + strconv.FormatInt(m.info.generation, 10)
	if len(name) > 253 {
		name = name[len(name)-253:]
	}
	return name
}

// viaMigrator rewrites the objects whose managedFields name other
// versions itself (the migrator does not look at managedFields), then
// has the controller manager's storage version migrator rewrite every
// object, and takes the point of its success as the checkpoint of the
// check passes. If no migrator
// takes the migration up within Options.MigratorTimeout, Auto deletes it
// and writes every object itself.
func (m *migration) viaMigrator(ctx context.Context) error {
	if err := m.firstPass(ctx, false); err != nil {
		return err
	}
	name := m.svmName()
	svm := &unstructured.Unstructured{}
	svm.SetGroupVersionKind(svmGVK)
	err := m.c.Get(ctx, client.ObjectKey{Name: name}, svm)
	if err == nil && isCondition(svm, "Failed") {
		if err := m.c.Delete(ctx, svm); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete failed StorageVersionMigration %s: %w", name, err)
		}
		err = apierrors.NewNotFound(schema.GroupResource{}, name)
	}
	if apierrors.IsNotFound(err) {
		svm = &unstructured.Unstructured{Object: map[string]any{
			"spec": map[string]any{"resource": map[string]any{"group": m.info.group, "resource": m.info.plural}},
		}}
		svm.SetGroupVersionKind(svmGVK)
		svm.SetName(name)
		svm.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "kopgo-migrate"})
		err = m.c.Create(ctx, svm, client.FieldOwner(m.opts.FieldManager))
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("StorageVersionMigration %s for %s: %w", name, m.info.name, err)
	}

	started := time.Now()
	var status svmStatus
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := m.c.Get(ctx, client.ObjectKey{Name: name}, svm); err != nil {
			return false, fmt.Errorf("get StorageVersionMigration %s: %w", name, err)
		}
		status = readSVMStatus(svm)
		if len(status.Conditions) == 0 && time.Since(started) > m.opts.MigratorTimeout {
			return true, nil
		}
		return apimeta.IsStatusConditionTrue(status.Conditions, "Succeeded") || apimeta.IsStatusConditionTrue(status.Conditions, "Failed"), nil
	})
	if err != nil {
		return err
	}
	switch {
	case len(status.Conditions) == 0:
		if m.opts.Method == StorageVersionMigration {
			return fmt.Errorf("StorageVersionMigration %s: no migrator took it up in %s (is the controller manager's storage-version-migrator-controller running?)", name, m.opts.MigratorTimeout)
		}
		if err := m.c.Delete(ctx, svm); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete StorageVersionMigration %s no migrator took up: %w", name, err)
		}
		m.rep.Method = Write
		m.rep.Objects = 0
		return m.firstPass(ctx, true)
	case apimeta.IsStatusConditionTrue(status.Conditions, "Failed"):
		c := apimeta.FindStatusCondition(status.Conditions, "Failed")
		return fmt.Errorf("StorageVersionMigration %s: field status.conditions[Failed]: %s", name, c.Message)
	}
	// The migrator's own writes move the objects' resourceVersions above
	// its checkpoint, and leave no trace (an empty patch adds no
	// managedFields entry). What it vouches for is everything up to its
	// success, so the checkpoint of the check passes is the
	// StorageVersionMigration's resourceVersion as read succeeded, from the
	// same etcd revision sequence as the objects'. A write at the old
	// version that raced the migrator in that window is trusted as the
	// migrator trusts it; Write checks each object.
	m.checkpoint = svm.GetResourceVersion()
	return nil
}

func readSVMStatus(u *unstructured.Unstructured) svmStatus {
	var s svmStatus
	if raw, ok := u.Object["status"].(map[string]any); ok {
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &s)
	}
	return s
}

func isCondition(u *unstructured.Unstructured, t string) bool {
	return apimeta.IsStatusConditionTrue(readSVMStatus(u).Conditions, t)
}

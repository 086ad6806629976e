package testkit

import (
	"context"
	"fmt"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Storage in a full cluster: a dynamic provisioner (built on the Kubernetes
// SIG Storage provisioner library by the tools build) creates a
// PersistentVolume for each claim of its StorageClasses, the controller
// manager's PersistentVolume binder binds them, and a Released volume whose
// reclaim policy is Delete is deleted by the provisioner. Each volume is a
// directory under [Cluster.Dir]; kwok's pods mount nothing.
const (
	// StorageClassName is the full cluster's default StorageClass: a claim
	// without storageClassName gets it. Its volume binding mode is
	// WaitForFirstConsumer, as in kind and most cloud clusters: a claim
	// stays Pending until a pod that uses it is scheduled, then is
	// provisioned and bound (a StatefulSet's volumeClaimTemplates work
	// this way). Reclaim policy Delete.
	StorageClassName = "standard"
	// ImmediateStorageClassName is a StorageClass whose claims are
	// provisioned and bound as soon as they are created, with or without a
	// pod. Reclaim policy Delete.
	ImmediateStorageClassName = "standard-immediate"
	// ProvisionerName is the provisioner both StorageClasses name. A
	// test's own StorageClass that names it is served too, with the
	// binding mode and reclaim policy it sets (Retain keeps a Released
	// volume).
	ProvisionerName = "testkit.kopgo.dev/hostdir"
)

// storageClasses are the StorageClasses of a full cluster.
func storageClasses() []*storagev1.StorageClass {
	class := func(name string, mode storagev1.VolumeBindingMode, reclaim corev1.PersistentVolumeReclaimPolicy) *storagev1.StorageClass {
		return &storagev1.StorageClass{
			ObjectMeta:        metav1.ObjectMeta{Name: name},
			Provisioner:       ProvisionerName,
			VolumeBindingMode: &mode,
			ReclaimPolicy:     &reclaim,
		}
	}
	standard := class(StorageClassName, storagev1.VolumeBindingWaitForFirstConsumer, corev1.PersistentVolumeReclaimDelete)
	standard.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
	return []*storagev1.StorageClass{
		standard,
		class(ImmediateStorageClassName, storagev1.VolumeBindingImmediate, corev1.PersistentVolumeReclaimDelete),
	}
}

func (c *Cluster) createStorageClasses(ctx context.Context) error {
	for _, sc := range storageClasses() {
		if err := c.client.Create(ctx, sc); err != nil {
			return fmt.Errorf("create StorageClass %s: %w", sc.Name, err)
		}
	}
	return nil
}

// provisionerProcess is the dynamic provisioner of a full cluster.
func (c *Cluster) provisionerProcess(bins binaries) *process {
	return &process{
		name: "provisioner", path: bins.provisioner, reaper: c.reaper,
		logPath: filepath.Join(c.Dir, "provisioner.log"),
		args: []string{
			"--kubeconfig=" + c.Kubeconfig,
			"--provisioner-name=" + ProvisionerName,
			"--root=" + filepath.Join(c.Dir, "volumes"),
		},
	}
}

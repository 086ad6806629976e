// Command provisioner is the dynamic volume provisioner of kopgo's full
// testkit cluster: built on the Kubernetes SIG Storage provisioner library
// (the library the CSI external-provisioner and the NFS and local-path
// provisioners share), it creates a PersistentVolume for each claim of a
// StorageClass that names it, and deletes the volume when a Released volume's
// reclaim policy is Delete. The kube-controller-manager's PersistentVolume
// binder binds the claim to the volume, as in any cluster with an external
// provisioner.
//
// Each volume is a directory under -root, so that provisioning and deletion
// do real work that can be seen: kwok's pods mount nothing, so the directory
// stays empty. Claims for raw block volumes and claims with a selector are
// refused, as most provisioners refuse them.
//
// The testkit starts it with the cluster's kubeconfig and stops it before the
// API server; it runs without leader election (one replica) and without a
// metrics endpoint.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

func main() {
	klog.InitFlags(nil)
	kubeconfig := flag.String("kubeconfig", "", "path of the kubeconfig to use")
	name := flag.String("provisioner-name", "testkit.kopgo.dev/hostdir", "the provisioner name StorageClasses refer to")
	root := flag.String("root", "", "directory under which each volume gets a directory")
	flag.Parse()
	if err := run(*kubeconfig, *name, *root); err != nil {
		klog.ErrorS(err, "Provisioner failed")
		klog.Flush()
		os.Exit(1)
	}
	klog.Flush()
}

func run(kubeconfig, name, root string) error {
	if root == "" {
		return errors.New("-root is required")
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return fmt.Errorf("create volume root: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.UserAgent = "kopgo-testkit-provisioner"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	pc := controller.NewProvisionController(ctx, client, name, &hostDir{root: root},
		controller.LeaderElection(false),
		// The PersistentVolume's finalizer keeps the object until its
		// directory is gone, as the CSI external-provisioner does.
		controller.AddFinalizer(true),
		// The library's default retries a failed claim after 15 s at the
		// earliest; a test waits for seconds, not minutes.
		controller.RateLimiter(workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, 5*time.Second)),
		controller.CreateProvisionedPVInterval(time.Second),
	)
	klog.InfoS("Starting provisioner", "name", name, "root", root)
	pc.Run(ctx) // returns when ctx ends
	klog.InfoS("Provisioner stopped")
	return nil
}

// hostDir provisions each volume as a directory under root.
type hostDir struct {
	root string
}

var _ controller.Provisioner = (*hostDir)(nil)

// Provision creates the claim's directory and returns its PersistentVolume;
// the library sets the claim reference, the storage class and the
// provisioned-by annotation.
func (p *hostDir) Provision(_ context.Context, opts controller.ProvisionOptions) (*corev1.PersistentVolume, controller.ProvisioningState, error) {
	if opts.PVC.Spec.Selector != nil {
		return nil, controller.ProvisioningFinished, errors.New("claims with a selector are not supported")
	}
	size, ok := opts.PVC.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok {
		return nil, controller.ProvisioningFinished, errors.New("the claim requests no storage")
	}
	dir := filepath.Join(p.root, opts.PVName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, controller.ProvisioningNoChange, fmt.Errorf("create volume directory: %w", err)
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	if opts.StorageClass.ReclaimPolicy != nil {
		reclaim = *opts.StorageClass.ReclaimPolicy
	}
	hostPathType := corev1.HostPathDirectoryOrCreate
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: opts.PVName},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: reclaim,
			AccessModes:                   opts.PVC.Spec.AccessModes,
			MountOptions:                  opts.StorageClass.MountOptions,
			VolumeMode:                    opts.PVC.Spec.VolumeMode,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: &hostPathType},
			},
		},
	}
	klog.InfoS("Provisioned volume", "pv", opts.PVName, "claim", klog.KObj(opts.PVC), "dir", dir)
	return pv, controller.ProvisioningFinished, nil
}

// Delete removes the directory of a volume this provisioner created.
func (p *hostDir) Delete(_ context.Context, pv *corev1.PersistentVolume) error {
	if pv.Spec.HostPath == nil || !strings.HasPrefix(pv.Spec.HostPath.Path, p.root+string(filepath.Separator)) {
		return &controller.IgnoredError{Reason: "not a volume of this provisioner"}
	}
	if err := os.RemoveAll(pv.Spec.HostPath.Path); err != nil {
		return fmt.Errorf("remove volume directory: %w", err)
	}
	klog.InfoS("Deleted volume", "pv", pv.Name, "dir", pv.Spec.HostPath.Path)
	return nil
}

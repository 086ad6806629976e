package testkit

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kwokNodeAnnotation marks the nodes kwok manages, as kwok's own docs do.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// nodeLabel is set to "kwok" on every fake node of a full cluster.
const nodeLabel = "type"

// controllers are the kube-controller-manager controllers a full cluster
// runs: enough for workloads to roll out, owners to cascade, namespaces to
// finish terminating and nodes to lose their not-ready taint, without cloud
// or certificate machinery. Two more keep RBAC and quota tests honest:
// without the ClusterRole aggregation controller the built-in admin, edit
// and view roles have no rules (so binding them needs no "bind" or
// "escalate", and an RBAC test passes that production refuses), and without
// the resource-quota controller a ResourceQuota's status stays empty (and
// the quota admission plugin enforces nothing). The volume controllers bind
// claims to the volumes the provisioner creates (binder), keep a claim or a
// volume in use from going away (the two protection controllers, whose
// finalizers the API server adds to every claim and volume: without them a
// deleted claim never goes) and make the claims of generic ephemeral
// volumes. The storage version migrator (GA in Kubernetes 1.37, its API
// storagemigration.k8s.io/v1 and its feature gate StorageVersionMigrator on
// by default in the API server and the controller manager, as are the
// client-go gates InformerResourceVersion and InOrderInformers it needs)
// runs the StorageVersionMigrations a test creates, from the garbage
// collector's cache, and prunes a migrated CRD's storedVersions.
// docs/testkit.md lists them for users; keep the two in step.
var controllers = []string{
	"garbage-collector-controller", "namespace-controller",
	"deployment-controller", "replicaset-controller", "statefulset-controller",
	"daemonset-controller", "job-controller", "cronjob-controller", "ttl-after-finished-controller",
	"endpoints-controller", "endpointslice-controller", "serviceaccount-controller",
	"node-lifecycle-controller", "pod-garbage-collector-controller", "horizontal-pod-autoscaler-controller", "disruption-controller",
	"clusterrole-aggregation-controller", "resourcequota-controller",
	"persistentvolume-binder-controller", "persistentvolumeclaim-protection-controller",
	"persistentvolume-protection-controller", "ephemeral-volume-controller",
	"storage-version-migrator-controller",
}

func (c *Cluster) startFull(ctx context.Context, bins binaries) error {
	// The StorageClasses come first, so that the default one is known to
	// the API server's DefaultStorageClass admission before any claim.
	if err := c.createStorageClasses(ctx); err != nil {
		return err
	}
	podStages, err := writePodStages(c.Dir)
	if err != nil {
		return err
	}
	kubeconfig := "--kubeconfig=" + c.Kubeconfig
	kcm := &process{
		name: "kube-controller-manager", path: bins.controllerManager, reaper: c.reaper,
		logPath: filepath.Join(c.Dir, "kube-controller-manager.log"),
		args: []string{
			kubeconfig, "--leader-elect=false", "--secure-port=0",
			"--controllers=" + strings.Join(controllers, ","),
			"--use-service-account-credentials=false",
			"--service-cluster-ip-range=" + serviceCIDR,
			"--concurrent-gc-syncs=10",
		},
	}
	scheduler := &process{
		name: "kube-scheduler", path: bins.scheduler, reaper: c.reaper,
		logPath: filepath.Join(c.Dir, "kube-scheduler.log"),
		args:    []string{kubeconfig, "--leader-elect=false", "--secure-port=0"},
	}
	kwok := &process{
		name: "kwok", path: bins.kwok, reaper: c.reaper,
		logPath: filepath.Join(c.Dir, "kwok.log"),
		args: []string{
			kubeconfig, "--config=" + bins.kwokBaseStages, "--config=" + podStages,
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
			"--cidr=10.244.0.0/16", "--node-ip=10.0.0.2",
			"--node-lease-duration-seconds=40",
		},
	}
	provisioner := c.provisionerProcess(bins)
	for _, p := range []*process{kcm, scheduler, kwok, provisioner} {
		if err := p.start(); err != nil {
			return err
		}
		c.others = append(c.others, p)
	}
	for i := range c.opts.Nodes {
		if err := c.client.Create(ctx, fakeNode(fmt.Sprintf("kwok-node-%d", i))); err != nil {
			return fmt.Errorf("create kwok node: %w", err)
		}
	}
	// Nodes turn Ready when kwok runs; the default ServiceAccount appears when
	// the controller manager runs.
	if err := kwok.waitFor(ctx, "kwok nodes to be Ready and untainted", func(ctx context.Context) error {
		return c.nodesReady(ctx)
	}); err != nil {
		return err
	}
	if err := kcm.waitFor(ctx, "the default ServiceAccount", func(ctx context.Context) error {
		return c.client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
	}); err != nil {
		return err
	}
	// The provisioner has nothing to show until a claim comes (it finds
	// the claims made before it started when its informers list them), so
	// nothing is waited for; but one that could not start is reported now
	// rather than as a claim that stays Pending.
	if ok, _ := provisioner.exited(); ok {
		return provisioner.failure(errors.New("it exited"))
	}
	return nil
}

func (c *Cluster) nodesReady(ctx context.Context) error {
	var nodes corev1.NodeList
	if err := c.client.List(ctx, &nodes, client.MatchingLabels{nodeLabel: "kwok"}); err != nil {
		return err
	}
	ready := 0
	for _, n := range nodes.Items {
		// The API server taints new nodes not-ready; the node lifecycle
		// controller lifts the taint once kwok reports the node Ready.
		if len(n.Spec.Taints) > 0 {
			continue
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	if ready < c.opts.Nodes {
		return fmt.Errorf("%d of %d nodes ready", ready, c.opts.Nodes)
	}
	return nil
}

// fakeNode is a node kwok manages: generous capacity and no taint, so that
// ordinary workloads schedule onto it without tolerations.
func fakeNode(name string) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{kwokNodeAnnotation: "fake"},
			Labels: map[string]string{
				nodeLabel: "kwok", corev1.LabelHostname: name,
				corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

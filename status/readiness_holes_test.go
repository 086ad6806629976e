package status_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/status"
)

// obj is an unstructured object of apiVersion and kind, named name at
// generation 2, with spec and status.
func obj(apiVersion, kind, name string, spec, st map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "spec": spec, "status": st}}
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetGeneration(2)
	return u
}

// What is not read or not understood is not ready: a DaemonSet or a
// ReplicaSet whose status lacks the fields readiness needs reads
// InProgress, never "0 of 0 pods available"; and no message has a hole
// where a name is empty.
func TestReadinessOfIncompleteStatusAndEmptyNames(t *testing.T) {
	const (
		current    = status.StateCurrent
		inProgress = status.StateInProgress
		failed     = status.StateFailed
	)
	for _, tc := range []struct {
		name string
		obj  client.Object
		want status.Readiness
	}{
		// Status fields absent.
		{"DaemonSet without desiredNumberScheduled", obj("apps/v1", "DaemonSet", "agent", nil, map[string]any{"observedGeneration": int64(2)}),
			status.Readiness{inProgress, "NoStatus", "DaemonSet agent: waiting for its controller to write its status"}},
		{"DaemonSet without status, no generation, typed", &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent"}},
			status.Readiness{inProgress, "NoStatus", "DaemonSet agent: waiting for its controller to write its status"}},
		{"DaemonSet on no node, as the API server writes it", obj("apps/v1", "DaemonSet", "agent", nil, map[string]any{"observedGeneration": int64(2),
			"desiredNumberScheduled": int64(0), "currentNumberScheduled": int64(0), "numberMisscheduled": int64(0), "numberReady": int64(0)}),
			status.Readiness{current, "Available", "DaemonSet agent: 0 of 0 pods available"}},
		{"DaemonSet available without numberReady", obj("apps/v1", "DaemonSet", "agent", nil, map[string]any{"observedGeneration": int64(2),
			"desiredNumberScheduled": int64(2), "currentNumberScheduled": int64(2), "updatedNumberScheduled": int64(2), "numberAvailable": int64(2)}),
			status.Readiness{inProgress, "NotReady", "DaemonSet agent: 0 of 2 pods ready"}},
		{"ReplicaSet available without readyReplicas", obj("apps/v1", "ReplicaSet", "web-abc", map[string]any{"replicas": int64(2)},
			map[string]any{"observedGeneration": int64(2), "replicas": int64(2), "availableReplicas": int64(2)}),
			status.Readiness{inProgress, "NotReady", "ReplicaSet web-abc: 0 of 2 replicas ready"}},
		{"ReplicaSet scaled to 0 without status.replicas", obj("apps/v1", "ReplicaSet", "web-abc", map[string]any{"replicas": int64(0)},
			map[string]any{"observedGeneration": int64(2)}),
			status.Readiness{inProgress, "NoStatus", "ReplicaSet web-abc: waiting for its controller to write its status"}},
		{"ReplicaSet scaled to 0 without status, typed", &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-abc"},
			Spec: appsv1.ReplicaSetSpec{Replicas: new(int32(0))}},
			status.Readiness{inProgress, "NoStatus", "ReplicaSet web-abc: waiting for its controller to write its status"}},
		{"ReplicaSet scaled to 0, as the API server writes it", obj("apps/v1", "ReplicaSet", "web-abc", map[string]any{"replicas": int64(0)},
			map[string]any{"observedGeneration": int64(2), "replicas": int64(0)}),
			status.Readiness{current, "Available", "ReplicaSet web-abc: 0 of 0 replicas available"}},
		{"ReplicaSet generation not observed, without status.replicas", obj("apps/v1", "ReplicaSet", "web-abc", nil, map[string]any{"observedGeneration": int64(1)}),
			status.Readiness{inProgress, "GenerationNotObserved", "ReplicaSet web-abc: waiting for its controller to observe generation 2 (observed 1)"}},

		// Empty names.
		{"CRD without a name", obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", nil, map[string]any{
			"conditions": []any{map[string]any{"type": "Established", "status": "True"}}}),
			status.Readiness{current, "Established", "CustomResourceDefinition: established"}},
		{"PersistentVolumeClaim bound, volume not named", &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}},
			status.Readiness{current, "Bound", "PersistentVolumeClaim data: bound to a volume"}},
		{"PersistentVolumeClaim lost, volume not named", &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimLost}},
			status.Readiness{failed, "ClaimLost", "PersistentVolumeClaim data: lost its volume"}},
		{"Service load balancer without IP or hostname", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec:   corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{}}}}},
			status.Readiness{current, "Ready", "Service web: load balancer ready"}},
		{"StatefulSet rolling out, revision not named", &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Generation: 1},
			Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 1, CurrentRevision: "db-1"}},
			status.Readiness{inProgress, "RollingOut", "StatefulSet db: 0 of 1 replicas updated"}},
		{"Deployment without a name", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 1},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}},
			status.Readiness{current, "Available", "Deployment: 1 of 1 replicas available"}},
		{"ConfigMap without a name", &corev1.ConfigMap{}, status.Readiness{current, "Current", "ConfigMap: nothing to wait for"}},
		{"Pod without a name, container without a name", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending,
			ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}},
			status.Readiness{inProgress, "Pending", "Pod: container waiting: ContainerCreating"}},
		{"custom resource without a name, stalled", obj("example.com/v1", "Thing", "", nil, map[string]any{
			"conditions": []any{map[string]any{"type": "Stalled", "status": "True", "reason": "Broken"}}}),
			status.Readiness{failed, "Stalled", "Thing is stalled: Broken"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := status.ReadinessOf(tc.obj)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ReadinessOf (-want +got):\n%s", diff)
			}
			if strings.Contains(got.Message, " :") || strings.Contains(got.Message, "  ") || strings.HasSuffix(got.Message, " ") {
				t.Errorf("message %q has an empty part", got.Message)
			}
		})
	}
}

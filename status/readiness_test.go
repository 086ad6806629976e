package status_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

func objMeta(name string, gen int64) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: gen}
}

func deploy(replicas *int32, st appsv1.DeploymentStatus, mod ...func(*appsv1.Deployment)) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: objMeta("web", 2), Spec: appsv1.DeploymentSpec{Replicas: replicas}, Status: st}
	for _, m := range mod {
		m(d)
	}
	return d
}

// depStatus is a Deployment's status at generation 2: replicas, updated,
// available (ready is the same as available).
func depStatus(replicas, updated, available int32, conds ...appsv1.DeploymentCondition) appsv1.DeploymentStatus {
	return appsv1.DeploymentStatus{
		ObservedGeneration: 2, Replicas: replicas, UpdatedReplicas: updated,
		ReadyReplicas: available, AvailableReplicas: available, Conditions: conds,
	}
}

func sts(replicas *int32, st appsv1.StatefulSetStatus, mod ...func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
	s := &appsv1.StatefulSet{ObjectMeta: objMeta("db", 2), Spec: appsv1.StatefulSetSpec{Replicas: replicas}, Status: st}
	for _, m := range mod {
		m(s)
	}
	return s
}

func stsStatus(replicas, updated, available int32, current, update string) appsv1.StatefulSetStatus {
	return appsv1.StatefulSetStatus{
		ObservedGeneration: 2, Replicas: replicas, UpdatedReplicas: updated, ReadyReplicas: available,
		AvailableReplicas: available, CurrentRevision: current, UpdateRevision: update,
	}
}

func partition(p int32) func(*appsv1.StatefulSet) {
	return func(s *appsv1.StatefulSet) {
		s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{
			Type:          appsv1.RollingUpdateStatefulSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: &p},
		}
	}
}

func ds(st appsv1.DaemonSetStatus, mod ...func(*appsv1.DaemonSet)) *appsv1.DaemonSet {
	d := &appsv1.DaemonSet{ObjectMeta: objMeta("agent", 2), Status: st}
	for _, m := range mod {
		m(d)
	}
	return d
}

func dsStatus(desired, current, updated, available int32) appsv1.DaemonSetStatus {
	return appsv1.DaemonSetStatus{
		ObservedGeneration: 2, DesiredNumberScheduled: desired, CurrentNumberScheduled: current,
		UpdatedNumberScheduled: updated, NumberReady: available, NumberAvailable: available,
	}
}

func rs(replicas *int32, st appsv1.ReplicaSetStatus) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: objMeta("web-abc", 2), Spec: appsv1.ReplicaSetSpec{Replicas: replicas}, Status: st}
}

func job(suspend *bool, st batchv1.JobStatus) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: objMeta("migrate", 1), Spec: batchv1.JobSpec{Suspend: suspend}, Status: st}
}

func jobCond(t batchv1.JobConditionType, s corev1.ConditionStatus, reason, msg string) batchv1.JobCondition {
	return batchv1.JobCondition{Type: t, Status: s, Reason: reason, Message: msg}
}

func pvc(phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: objMeta("data", 0), Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-1"},
		Status: corev1.PersistentVolumeClaimStatus{Phase: phase},
	}
}

func svc(t corev1.ServiceType, ingress ...corev1.LoadBalancerIngress) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objMeta("web", 0), Spec: corev1.ServiceSpec{Type: t},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: ingress}},
	}
}

func pod(st corev1.PodStatus) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: objMeta("web-abc-xyz", 1), Status: st}
}

func podCond(t corev1.PodConditionType, s corev1.ConditionStatus, reason, msg string) corev1.PodCondition {
	return corev1.PodCondition{Type: t, Status: s, Reason: reason, Message: msg}
}

func crd(conds ...apiextensionsv1.CustomResourceDefinitionCondition) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets.example.com", Generation: 1},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Kind: "Gadget"},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{Conditions: conds},
	}
}

func crdCond(t apiextensionsv1.CustomResourceDefinitionConditionType, s apiextensionsv1.ConditionStatus, reason, msg string) apiextensionsv1.CustomResourceDefinitionCondition {
	return apiextensionsv1.CustomResourceDefinitionCondition{Type: t, Status: s, Reason: reason, Message: msg}
}

// running is a Pod in phase Running whose containers are as given.
func running(containers ...corev1.ContainerStatus) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: containers}
}

// crashLooping is a container waiting in CrashLoopBackOff after restarts
// restarts, the last one having exited with code.
func crashLooping(name string, restarts, code int32) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{
		Name: name, RestartCount: restarts,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container=" + name,
		}},
	}
	if code != 0 {
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error"}
	}
	return cs
}

// terminated is a container that exited with code for reason.
func terminated(name string, code int32, reason string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason}}}
}

func gizmo(gen, observed int64, conds ...metav1.Condition) *widget.Widget {
	return &widget.Widget{
		ObjectMeta: objMeta("w", gen),
		Status:     widget.WidgetStatus{ObservedGeneration: observed, Conditions: conds},
	}
}

// metadataOnly is obj as a metadata client reads it.
func metadataOnly(obj client.Object, apiVersion, kind string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}}
	obj.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta).DeepCopyInto(&m.ObjectMeta)
	return m
}

func kcond(t string, s metav1.ConditionStatus, reason, msg string, gen int64) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen}
}

func deleting[T client.Object](obj T) T {
	obj.SetDeletionTimestamp(new(metav1.Unix(1_800_000_000, 0)))
	obj.SetFinalizers([]string{"example.com/f"})
	return obj
}

func TestReadinessOf(t *testing.T) {
	var (
		current          = status.StateCurrent
		inProgress       = status.StateInProgress
		failed           = status.StateFailed
		terminatingState = status.StateTerminating
	)
	deadline := appsv1.DeploymentCondition{
		Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
		Message: `ReplicaSet "web-abc" has timed out progressing.`,
	}
	paused := func(d *appsv1.Deployment) { d.Spec.Paused = true }
	onDeleteSts := func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType }
	onDeleteDs := func(d *appsv1.DaemonSet) { d.Spec.UpdateStrategy.Type = appsv1.OnDeleteDaemonSetStrategyType }
	tests := []struct {
		name string
		obj  client.Object
		want status.Readiness
	}{
		// Deployment.
		{"Deployment rolled out", deploy(new(int32(3)), depStatus(3, 3, 3)), status.Readiness{current, "Available", "Deployment web: 3 of 3 replicas available"}},
		{"Deployment replicas nil means 1", deploy(nil, depStatus(1, 1, 1)), status.Readiness{current, "Available", "Deployment web: 1 of 1 replicas available"}},
		{"Deployment replicas nil, no pod", deploy(nil, depStatus(0, 0, 0)), status.Readiness{inProgress, "RollingOut", "Deployment web: 0 of 1 replicas updated"}},
		{"Deployment scaled to 0", deploy(new(int32(0)), depStatus(0, 0, 0)), status.Readiness{current, "Available", "Deployment web: 0 of 0 replicas available"}},
		{"Deployment scaled to 0, pods terminating", deploy(new(int32(0)), depStatus(2, 0, 2)), status.Readiness{inProgress, "RollingOut", "Deployment web: 2 old replicas pending termination"}},
		{"Deployment generation not observed", deploy(new(int32(3)), appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3}), status.Readiness{inProgress, "GenerationNotObserved", "Deployment web: waiting for its controller to observe generation 2 (observed 1)"}},
		{"Deployment without status", deploy(new(int32(3)), appsv1.DeploymentStatus{}), status.Readiness{inProgress, "GenerationNotObserved", "Deployment web: waiting for its controller to observe generation 2 (observed 0)"}},
		{"Deployment updating", deploy(new(int32(3)), depStatus(4, 1, 3)), status.Readiness{inProgress, "RollingOut", "Deployment web: 1 of 3 replicas updated"}},
		{"Deployment old replicas left", deploy(new(int32(3)), depStatus(4, 3, 3)), status.Readiness{inProgress, "RollingOut", "Deployment web: 1 old replicas pending termination"}},
		{"Deployment scaling down", deploy(new(int32(1)), depStatus(3, 3, 3)), status.Readiness{inProgress, "Scaling", "Deployment web: 2 extra replicas pending termination"}},
		{"Deployment not available", deploy(new(int32(3)), depStatus(3, 3, 2)), status.Readiness{inProgress, "Unavailable", "Deployment web: 2 of 3 replicas available"}},
		{"Deployment progress deadline exceeded", deploy(new(int32(3)), depStatus(3, 1, 2, deadline)), status.Readiness{failed, "ProgressDeadlineExceeded", `Deployment web: progress deadline exceeded: ReplicaSet "web-abc" has timed out progressing.`}},
		{"Deployment deadline exceeded, new spec not observed", deploy(new(int32(3)), appsv1.DeploymentStatus{ObservedGeneration: 1, Conditions: []appsv1.DeploymentCondition{deadline}}), status.Readiness{inProgress, "GenerationNotObserved", "Deployment web: waiting for its controller to observe generation 2 (observed 1)"}},
		{"Deployment paused mid-rollout", deploy(new(int32(3)), depStatus(3, 0, 3), paused), status.Readiness{inProgress, "Paused", "Deployment web is paused: 0 of 3 replicas updated"}},
		{"Deployment paused, rolled out", deploy(new(int32(3)), depStatus(3, 3, 3), paused), status.Readiness{current, "Available", "Deployment web: 3 of 3 replicas available"}},
		{"Deployment terminating", deleting(deploy(nil, depStatus(1, 1, 1))), status.Readiness{terminatingState, "Terminating", "Deployment web is being deleted"}},

		{"Deployment rolled out, kstatus Stalled=True", deploy(new(int32(3)), depStatus(3, 3, 3, appsv1.DeploymentCondition{
			Type: status.Stalled, Status: corev1.ConditionTrue, Reason: "PolicyViolation", Message: "image not signed",
		})), status.Readiness{failed, "Stalled", "Deployment web is stalled: PolicyViolation: image not signed"}},
		{"Deployment rolled out, kstatus Reconciling=True", deploy(new(int32(3)), depStatus(3, 3, 3, appsv1.DeploymentCondition{
			Type: status.Reconciling, Status: corev1.ConditionTrue, Reason: "Canary", Message: "10% of traffic shifted",
		})), status.Readiness{inProgress, "Reconciling", "Deployment web: reconciling: Canary: 10% of traffic shifted"}},
		{"Deployment rolled out, kstatus Stalled=False", deploy(new(int32(3)), depStatus(3, 3, 3, appsv1.DeploymentCondition{
			Type: status.Stalled, Status: corev1.ConditionFalse, Reason: "Signed",
		})), status.Readiness{current, "Available", "Deployment web: 3 of 3 replicas available"}},
		{"Deployment deadline exceeded, kstatus Reconciling=True", deploy(new(int32(3)), depStatus(3, 1, 2, deadline, appsv1.DeploymentCondition{
			Type: status.Reconciling, Status: corev1.ConditionTrue, Reason: "Retrying",
		})), status.Readiness{inProgress, "Reconciling", "Deployment web: reconciling: Retrying"}},
		{"Deployment generation not observed, kstatus Stalled=True", deploy(new(int32(3)), appsv1.DeploymentStatus{ObservedGeneration: 1, Conditions: []appsv1.DeploymentCondition{{
			Type: status.Stalled, Status: corev1.ConditionTrue, Reason: "PolicyViolation",
		}}}), status.Readiness{inProgress, "GenerationNotObserved", "Deployment web: waiting for its controller to observe generation 2 (observed 1)"}},

		// StatefulSet.
		{"StatefulSet rolled out", sts(new(int32(3)), stsStatus(3, 3, 3, "db-1", "db-1")), status.Readiness{current, "Available", "StatefulSet db: 3 of 3 replicas available"}},
		{"StatefulSet replicas nil means 1", sts(nil, stsStatus(0, 0, 0, "db-1", "db-1")), status.Readiness{inProgress, "Scaling", "StatefulSet db: 0 of 1 replicas created"}},
		{"StatefulSet scaled to 0", sts(new(int32(0)), stsStatus(0, 0, 0, "db-1", "db-1")), status.Readiness{current, "Available", "StatefulSet db: 0 of 0 replicas available"}},
		{"StatefulSet scaling down", sts(new(int32(1)), stsStatus(2, 2, 2, "db-1", "db-1")), status.Readiness{inProgress, "Scaling", "StatefulSet db: 1 extra replicas pending termination"}},
		{"StatefulSet generation not observed", sts(new(int32(1)), appsv1.StatefulSetStatus{ObservedGeneration: 1}), status.Readiness{inProgress, "GenerationNotObserved", "StatefulSet db: waiting for its controller to observe generation 2 (observed 1)"}},
		{"StatefulSet rolling update", sts(new(int32(3)), stsStatus(3, 1, 3, "db-1", "db-2")), status.Readiness{inProgress, "RollingOut", "StatefulSet db: 1 of 3 replicas updated to revision db-2"}},
		{"StatefulSet partition not reached", sts(new(int32(3)), stsStatus(3, 0, 3, "db-1", "db-2"), partition(1)), status.Readiness{inProgress, "RollingOut", "StatefulSet db: 0 of 2 replicas updated (partition 1)"}},
		{"StatefulSet partition reached", sts(new(int32(3)), stsStatus(3, 2, 3, "db-1", "db-2"), partition(1)), status.Readiness{current, "Available", "StatefulSet db: 3 of 3 replicas available"}},
		{"StatefulSet partition above replicas", sts(new(int32(3)), stsStatus(3, 0, 3, "db-1", "db-2"), partition(5)), status.Readiness{current, "Available", "StatefulSet db: 3 of 3 replicas available"}},
		{"StatefulSet OnDelete waits for no update", sts(new(int32(3)), stsStatus(3, 0, 3, "db-1", "db-2"), onDeleteSts), status.Readiness{current, "Available", "StatefulSet db: 3 of 3 replicas available"}},
		{"StatefulSet rolled out, kstatus Reconciling=True", sts(new(int32(1)), func() appsv1.StatefulSetStatus {
			st := stsStatus(1, 1, 1, "db-1", "db-1")
			st.Conditions = []appsv1.StatefulSetCondition{{Type: status.Reconciling, Status: corev1.ConditionTrue, Reason: "Resizing", Message: "volumes growing"}}
			return st
		}()), status.Readiness{inProgress, "Reconciling", "StatefulSet db: reconciling: Resizing: volumes growing"}},
		{"StatefulSet not available", sts(new(int32(3)), stsStatus(3, 3, 1, "db-2", "db-2")), status.Readiness{inProgress, "Unavailable", "StatefulSet db: 1 of 3 replicas available"}},

		// DaemonSet.
		{"DaemonSet rolled out", ds(dsStatus(2, 2, 2, 2)), status.Readiness{current, "Available", "DaemonSet agent: 2 of 2 pods available"}},
		{"DaemonSet on no node", ds(dsStatus(0, 0, 0, 0)), status.Readiness{current, "Available", "DaemonSet agent: 0 of 0 pods available"}},
		{"DaemonSet never observed", ds(appsv1.DaemonSetStatus{}), status.Readiness{inProgress, "GenerationNotObserved", "DaemonSet agent: waiting for its controller to observe generation 2 (observed 0)"}},
		{"DaemonSet scheduling", ds(dsStatus(3, 2, 2, 2)), status.Readiness{inProgress, "Scaling", "DaemonSet agent: 2 of 3 nodes run a pod"}},
		{"DaemonSet updating", ds(dsStatus(3, 3, 1, 3)), status.Readiness{inProgress, "RollingOut", "DaemonSet agent: 1 of 3 pods updated"}},
		{"DaemonSet OnDelete waits for no update", ds(dsStatus(3, 3, 1, 3), onDeleteDs), status.Readiness{current, "Available", "DaemonSet agent: 3 of 3 pods available"}},
		{"DaemonSet rolled out, kstatus Stalled=True", ds(func() appsv1.DaemonSetStatus {
			st := dsStatus(2, 2, 2, 2)
			st.Conditions = []appsv1.DaemonSetCondition{{Type: status.Stalled, Status: corev1.ConditionTrue, Reason: "NodeSelectorInvalid"}}
			return st
		}()), status.Readiness{failed, "Stalled", "DaemonSet agent is stalled: NodeSelectorInvalid"}},
		{"DaemonSet not available", ds(dsStatus(3, 3, 3, 0)), status.Readiness{inProgress, "Unavailable", "DaemonSet agent: 0 of 3 pods available"}},

		// ReplicaSet.
		{"ReplicaSet available", rs(new(int32(2)), appsv1.ReplicaSetStatus{ObservedGeneration: 2, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}), status.Readiness{current, "Available", "ReplicaSet web-abc: 2 of 2 replicas available"}},
		{"ReplicaSet replicas nil means 1", rs(nil, appsv1.ReplicaSetStatus{ObservedGeneration: 2}), status.Readiness{inProgress, "Scaling", "ReplicaSet web-abc: 0 of 1 replicas created"}},
		{"ReplicaSet scaling down", rs(new(int32(0)), appsv1.ReplicaSetStatus{ObservedGeneration: 2, Replicas: 1, AvailableReplicas: 1}), status.Readiness{inProgress, "Scaling", "ReplicaSet web-abc: 1 extra replicas pending termination"}},
		{"ReplicaSet not available", rs(new(int32(2)), appsv1.ReplicaSetStatus{ObservedGeneration: 2, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 1}), status.Readiness{inProgress, "Unavailable", "ReplicaSet web-abc: 1 of 2 replicas available"}},
		{"ReplicaSet generation not observed", rs(new(int32(2)), appsv1.ReplicaSetStatus{ObservedGeneration: 1}), status.Readiness{inProgress, "GenerationNotObserved", "ReplicaSet web-abc: waiting for its controller to observe generation 2 (observed 1)"}},
		{"ReplicaSet replica failure", rs(new(int32(2)), appsv1.ReplicaSetStatus{ObservedGeneration: 2, Conditions: []appsv1.ReplicaSetCondition{{
			Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: `pods "web-abc-x" is forbidden: exceeded quota`,
		}}}), status.Readiness{inProgress, "ReplicaFailure", `ReplicaSet web-abc: cannot create pods: pods "web-abc-x" is forbidden: exceeded quota`}},
		{"ReplicaSet replica failure without message", rs(new(int32(2)), appsv1.ReplicaSetStatus{ObservedGeneration: 2, Conditions: []appsv1.ReplicaSetCondition{{
			Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
		}}}), status.Readiness{inProgress, "ReplicaFailure", "ReplicaSet web-abc: cannot create pods: FailedCreate"}},
		{"ReplicaSet available, kstatus Stalled=True", rs(new(int32(1)), appsv1.ReplicaSetStatus{ObservedGeneration: 2, Replicas: 1, AvailableReplicas: 1, Conditions: []appsv1.ReplicaSetCondition{{
			Type: status.Stalled, Status: corev1.ConditionTrue, Message: "quarantined",
		}}}), status.Readiness{failed, "Stalled", "ReplicaSet web-abc is stalled: quarantined"}},

		// Job.
		{"Job complete", job(nil, batchv1.JobStatus{Succeeded: 1, Conditions: []batchv1.JobCondition{
			jobCond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, "CompletionsReached", ""),
			jobCond(batchv1.JobComplete, corev1.ConditionTrue, "CompletionsReached", "Reached expected number of succeeded pods"),
		}}), status.Readiness{current, "Complete", "Job migrate: complete, 1 succeeded"}},
		{"Job failed", job(nil, batchv1.JobStatus{Failed: 7, Conditions: []batchv1.JobCondition{
			jobCond(batchv1.JobFailed, corev1.ConditionTrue, "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
		}}), status.Readiness{failed, "JobFailed", "Job migrate failed: BackoffLimitExceeded: Job has reached the specified backoff limit"}},
		{"Job failing, pods terminating", job(nil, batchv1.JobStatus{Active: 1, Conditions: []batchv1.JobCondition{
			jobCond(batchv1.JobFailureTarget, corev1.ConditionTrue, "DeadlineExceeded", "Job was active longer than specified deadline"),
		}}), status.Readiness{failed, "JobFailed", "Job migrate failed: DeadlineExceeded: Job was active longer than specified deadline"}},
		{"Job running", job(nil, batchv1.JobStatus{Active: 1, Failed: 1}), status.Readiness{inProgress, "Running", "Job migrate: 1 active, 0 succeeded, 1 failed"}},
		{"Job not started", job(nil, batchv1.JobStatus{}), status.Readiness{inProgress, "NotStarted", "Job migrate: not started yet"}},
		{"Job started, no pod yet", job(nil, batchv1.JobStatus{StartTime: new(metav1.Unix(1_800_000_000, 0))}), status.Readiness{inProgress, "Running", "Job migrate: 0 active, 0 succeeded, 0 failed"}},
		{"Job failed without reason", job(nil, batchv1.JobStatus{Failed: 2, Conditions: []batchv1.JobCondition{
			jobCond(batchv1.JobFailed, corev1.ConditionTrue, "", ""),
		}}), status.Readiness{failed, "JobFailed", "Job migrate failed: 2 pods failed"}},
		{"Job complete, kstatus Stalled=True", job(nil, batchv1.JobStatus{Succeeded: 1, Conditions: []batchv1.JobCondition{
			jobCond(batchv1.JobComplete, corev1.ConditionTrue, "CompletionsReached", ""),
			jobCond(status.Stalled, corev1.ConditionTrue, "QuotaExceeded", "output bucket full"),
		}}), status.Readiness{failed, "Stalled", "Job migrate is stalled: QuotaExceeded: output bucket full"}},
		{"Job suspended by spec", job(new(true), batchv1.JobStatus{}), status.Readiness{inProgress, "Suspended", "Job migrate: suspended, 0 succeeded"}},
		{"Job suspended condition", job(nil, batchv1.JobStatus{Conditions: []batchv1.JobCondition{
			jobCond(batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended"),
		}}), status.Readiness{inProgress, "Suspended", "Job migrate: suspended, 0 succeeded"}},
		{"Job resumed", job(new(false), batchv1.JobStatus{Active: 1, Conditions: []batchv1.JobCondition{
			jobCond(batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed"),
		}}), status.Readiness{inProgress, "Running", "Job migrate: 1 active, 0 succeeded, 0 failed"}},

		// PersistentVolumeClaim.
		{"PVC bound", pvc(corev1.ClaimBound), status.Readiness{current, "Bound", "PersistentVolumeClaim data: bound to volume pv-1"}},
		{"PVC pending", pvc(corev1.ClaimPending), status.Readiness{inProgress, "Pending", "PersistentVolumeClaim data: waiting for a volume"}},
		{"PVC without phase", pvc(""), status.Readiness{inProgress, "Pending", "PersistentVolumeClaim data: waiting for a volume"}},
		{"PVC bound, kstatus Reconciling=True", func() client.Object {
			p := pvc(corev1.ClaimBound)
			p.Status.Conditions = []corev1.PersistentVolumeClaimCondition{{Type: status.Reconciling, Status: corev1.ConditionTrue, Reason: "Resizing"}}
			return p
		}(), status.Readiness{inProgress, "Reconciling", "PersistentVolumeClaim data: reconciling: Resizing"}},
		{"PVC lost", pvc(corev1.ClaimLost), status.Readiness{failed, "ClaimLost", "PersistentVolumeClaim data: lost its volume pv-1"}},

		// Service.
		{"Service ClusterIP", svc(corev1.ServiceTypeClusterIP), status.Readiness{current, "Current", "Service web: nothing to wait for"}},
		{"Service without type", svc(""), status.Readiness{current, "Current", "Service web: nothing to wait for"}},
		{"Service NodePort", svc(corev1.ServiceTypeNodePort), status.Readiness{current, "Current", "Service web: nothing to wait for"}},
		{"Service LoadBalancer pending", svc(corev1.ServiceTypeLoadBalancer), status.Readiness{inProgress, "Pending", "Service web: waiting for a load balancer address"}},
		{"Service LoadBalancer with IP", svc(corev1.ServiceTypeLoadBalancer, corev1.LoadBalancerIngress{IP: "203.0.113.7"}), status.Readiness{current, "Ready", "Service web: load balancer at 203.0.113.7"}},
		{"Service LoadBalancer with external IPs, no ingress", func() client.Object {
			s := svc(corev1.ServiceTypeLoadBalancer)
			s.Spec.ExternalIPs = []string{"198.51.100.4", "198.51.100.5"}
			return s
		}(), status.Readiness{current, "Ready", "Service web: reachable at external IP 198.51.100.4"}},
		{"Service with kstatus Reconciling=True", func() client.Object {
			s := svc(corev1.ServiceTypeClusterIP)
			s.Status.Conditions = []metav1.Condition{kcond(status.Reconciling, metav1.ConditionTrue, "Provisioning", "waiting for the mesh", 0)}
			return s
		}(), status.Readiness{inProgress, "Reconciling", "Service web: reconciling: Provisioning: waiting for the mesh"}},
		{"Service LoadBalancer with hostname", svc(corev1.ServiceTypeLoadBalancer, corev1.LoadBalancerIngress{Hostname: "lb.example.com"}), status.Readiness{current, "Ready", "Service web: load balancer at lb.example.com"}},

		// Pod.
		{"Pod ready", pod(corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{podCond(corev1.PodReady, corev1.ConditionTrue, "", "")}}), status.Readiness{current, "Ready", "Pod web-abc-xyz is ready"}},
		{"Pod succeeded", pod(corev1.PodStatus{Phase: corev1.PodSucceeded}), status.Readiness{current, "Succeeded", "Pod web-abc-xyz: succeeded"}},
		{"Pod failed", pod(corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."}), status.Readiness{failed, "PodFailed", "Pod web-abc-xyz failed: Evicted: The node was low on resource: memory."}},
		{"Pod running, not ready", pod(corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{podCond(corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", "")}}), status.Readiness{inProgress, "NotReady", "Pod web-abc-xyz: not ready"}},
		{"Pod crash looping", pod(running(corev1.ContainerStatus{Name: "sidecar", Ready: true}, crashLooping("app", 5, 1))),
			status.Readiness{failed, "CrashLoopBackOff", "Pod web-abc-xyz: container app is crash-looping (5 restarts, last exit code 1: Error)"}},
		{"Pod crash looping, no exit recorded", pod(running(crashLooping("app", 1, 0))),
			status.Readiness{failed, "CrashLoopBackOff", "Pod web-abc-xyz: container app is crash-looping (1 restarts)"}},
		{"Pod crash looping, PodScheduled=False as in kstatus' fixture", func() client.Object {
			st := running(crashLooping("nginx", 3, 2))
			st.Conditions = []corev1.PodCondition{podCond(corev1.PodScheduled, corev1.ConditionFalse, "Unschedulable", "")}
			return pod(st)
		}(), status.Readiness{failed, "CrashLoopBackOff", "Pod web-abc-xyz: container nginx is crash-looping (3 restarts, last exit code 2: Error)"}},
		{"Pod init container crash looping", pod(corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{crashLooping("migrate", 4, 1)}}),
			status.Readiness{failed, "CrashLoopBackOff", "Pod web-abc-xyz: container migrate is crash-looping (4 restarts, last exit code 1: Error)"}},
		{"Pod running, not ready, PodScheduled=False", pod(corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			podCond(corev1.PodScheduled, corev1.ConditionFalse, "Unschedulable", ""),
			podCond(corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", ""),
		}}), status.Readiness{inProgress, "NotReady", "Pod web-abc-xyz: not ready"}},
		{"Pod failed without reason", pod(corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{
			terminated("sidecar", 0, "Completed"), terminated("app", 137, "OOMKilled"),
		}}), status.Readiness{failed, "PodFailed", "Pod web-abc-xyz failed: container app exited with code 137 (OOMKilled)"}},
		{"Pod failed, init container", pod(corev1.PodStatus{Phase: corev1.PodFailed, InitContainerStatuses: []corev1.ContainerStatus{
			terminated("migrate", 3, "Error"),
		}}), status.Readiness{failed, "PodFailed", "Pod web-abc-xyz failed: container migrate exited with code 3 (Error)"}},
		{"Pod failed, nothing known", pod(corev1.PodStatus{Phase: corev1.PodFailed}), status.Readiness{failed, "PodFailed", "Pod web-abc-xyz failed"}},
		{"Pod unschedulable, no reason", pod(corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			podCond(corev1.PodScheduled, corev1.ConditionFalse, "", ""),
		}}), status.Readiness{inProgress, "Pending", "Pod web-abc-xyz: not scheduled"}},
		{"Pod ready, kstatus Stalled=True", pod(corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			podCond(corev1.PodReady, corev1.ConditionTrue, "", ""),
			podCond(status.Stalled, corev1.ConditionTrue, "", "evicted by policy"),
		}}), status.Readiness{failed, "Stalled", "Pod web-abc-xyz is stalled: evicted by policy"}},
		{"Pod unschedulable", pod(corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			podCond(corev1.PodScheduled, corev1.ConditionFalse, "Unschedulable", "0/3 nodes are available"),
		}}), status.Readiness{inProgress, "Pending", "Pod web-abc-xyz: not scheduled: Unschedulable: 0/3 nodes are available"}},
		{"Pod pulling", pod(corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{
			{Name: "init", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}},
		}}), status.Readiness{inProgress, "Pending", "Pod web-abc-xyz: container init waiting: ImagePullBackOff"}},
		{"Pod without status", pod(corev1.PodStatus{}), status.Readiness{inProgress, "Pending", "Pod web-abc-xyz: not ready"}},
		{"Pod generation not observed", pod(corev1.PodStatus{ObservedGeneration: 1, Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{podCond(corev1.PodReady, corev1.ConditionTrue, "", "")}}), status.Readiness{current, "Ready", "Pod web-abc-xyz is ready"}},
		{"Pod resized, not observed", func() client.Object {
			p := pod(corev1.PodStatus{ObservedGeneration: 1, Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{podCond(corev1.PodReady, corev1.ConditionTrue, "", "")}})
			p.Generation = 2
			return p
		}(), status.Readiness{inProgress, "GenerationNotObserved", "Pod web-abc-xyz: waiting for its controller to observe generation 2 (observed 1)"}},
		{"Pod terminating", deleting(pod(corev1.PodStatus{Phase: corev1.PodRunning})), status.Readiness{terminatingState, "Terminating", "Pod web-abc-xyz is being deleted"}},

		// CustomResourceDefinition.
		{"CRD just created", crd(), status.Readiness{inProgress, "Establishing", "CustomResourceDefinition gadgets.example.com: waiting for the API server to establish it"}},
		{"CRD installing", crd(
			crdCond(apiextensionsv1.NamesAccepted, apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found"),
			crdCond(apiextensionsv1.Established, apiextensionsv1.ConditionFalse, "Installing", "the initial names have been accepted"),
		), status.Readiness{inProgress, "Establishing", "CustomResourceDefinition gadgets.example.com: being established: Installing: the initial names have been accepted"}},
		{"CRD established", crd(
			crdCond(apiextensionsv1.NamesAccepted, apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found"),
			crdCond(apiextensionsv1.Established, apiextensionsv1.ConditionTrue, "InitialNamesAccepted", "the initial names have been accepted"),
		), status.Readiness{current, "Established", "CustomResourceDefinition gadgets.example.com: established"}},
		{"CRD names conflict", crd(
			crdCond(apiextensionsv1.NamesAccepted, apiextensionsv1.ConditionFalse, "KindConflict", `"Gadget" is already in use`),
			crdCond(apiextensionsv1.Established, apiextensionsv1.ConditionFalse, "NotAccepted", "not all names are accepted"),
		), status.Readiness{failed, "NamesNotAccepted", `CustomResourceDefinition gadgets.example.com: names not accepted: KindConflict: "Gadget" is already in use`}},
		{"CRD established, new names conflict", crd(
			crdCond(apiextensionsv1.NamesAccepted, apiextensionsv1.ConditionFalse, "PluralConflict", `"gizmos" is already in use`),
			crdCond(apiextensionsv1.Established, apiextensionsv1.ConditionTrue, "InitialNamesAccepted", "the initial names have been accepted"),
		), status.Readiness{failed, "NamesNotAccepted", `CustomResourceDefinition gadgets.example.com: names not accepted: PluralConflict: "gizmos" is already in use`}},
		{"CRD with an invalid conversion CA bundle", crd(
			crdCond(apiextensionsv1.NamesAccepted, apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found"),
			crdCond(apiextensionsv1.Established, apiextensionsv1.ConditionFalse, "InvalidCABundle", "The conversion webhook CABundle is invalid"),
		), status.Readiness{failed, "NotEstablished", "CustomResourceDefinition gadgets.example.com: not established: InvalidCABundle: The conversion webhook CABundle is invalid"}},
		{"CRD terminating", deleting(crd(crdCond(apiextensionsv1.Established, apiextensionsv1.ConditionTrue, "", ""))), status.Readiness{terminatingState, "Terminating", "CustomResourceDefinition gadgets.example.com is being deleted"}},
		{"CRD metadata only", metadataOnly(crd(), "apiextensions.k8s.io/v1", "CustomResourceDefinition"), status.Readiness{inProgress, "StatusNotRead", "CustomResourceDefinition gadgets.example.com: only its metadata was read, readiness needs its status"}},

		// Kinds without rules.
		{"ConfigMap", &corev1.ConfigMap{ObjectMeta: objMeta("cfg", 0)}, status.Readiness{current, "Current", "ConfigMap cfg: nothing to wait for"}},
		{"Secret", &corev1.Secret{ObjectMeta: objMeta("creds", 0)}, status.Readiness{current, "Current", "Secret creds: nothing to wait for"}},
		{"ServiceAccount terminating", deleting(&corev1.ServiceAccount{ObjectMeta: objMeta("sa", 0)}), status.Readiness{terminatingState, "Terminating", "ServiceAccount sa is being deleted"}},
		{"ServiceAccount", &corev1.ServiceAccount{ObjectMeta: objMeta("sa", 0)}, status.Readiness{current, "Current", "ServiceAccount sa: nothing to wait for"}},
		{"LimitRange, a kind without rules", &corev1.LimitRange{ObjectMeta: objMeta("limits", 0)}, status.Readiness{current, "Current", "LimitRange limits: nothing to wait for"}},

		// Metadata only.
		{"Deployment metadata only", metadataOnly(deploy(nil, depStatus(1, 1, 1)), "apps/v1", "Deployment"), status.Readiness{inProgress, "StatusNotRead", "Deployment web: only its metadata was read, readiness needs its status"}},
		{"Widget metadata only", metadataOnly(gizmo(1, 1), "test.kopgo.dev/v1", "Widget"), status.Readiness{inProgress, "StatusNotRead", "Widget w: only its metadata was read, readiness needs its status"}},
		{"ConfigMap metadata only", metadataOnly(&corev1.ConfigMap{ObjectMeta: objMeta("cfg", 0)}, "v1", "ConfigMap"), status.Readiness{current, "Current", "ConfigMap cfg: nothing to wait for"}},
		{"Pod metadata only, terminating", metadataOnly(deleting(pod(corev1.PodStatus{})), "v1", "Pod"), status.Readiness{terminatingState, "Terminating", "Pod web-abc-xyz is being deleted"}},

		// Generic kstatus conditions.
		{"custom resource without conditions", gizmo(1, 0), status.Readiness{current, "Current", "Widget w: nothing to wait for"}},
		{"custom resource ready", gizmo(3, 3, kcond(status.Ready, metav1.ConditionTrue, "Succeeded", "all good", 3)), status.Readiness{current, "Ready", "Widget w is ready: Succeeded: all good"}},
		{"custom resource ready, no observedGeneration", gizmo(3, 0, kcond(status.Ready, metav1.ConditionTrue, "Succeeded", "", 0)), status.Readiness{current, "Ready", "Widget w is ready: Succeeded"}},
		{"custom resource generation not observed", gizmo(3, 2, kcond(status.Ready, metav1.ConditionTrue, "Succeeded", "", 2)), status.Readiness{inProgress, "GenerationNotObserved", "Widget w: waiting for its controller to observe generation 3 (observed 2)"}},
		{"custom resource Ready for an old generation", gizmo(3, 0, kcond(status.Ready, metav1.ConditionTrue, "Succeeded", "", 2)), status.Readiness{inProgress, "GenerationNotObserved", "Widget w: Ready observed for generation 2, not 3"}},
		{"custom resource not ready", gizmo(3, 3, kcond(status.Ready, metav1.ConditionFalse, "Unavailable", "registry down", 3)), status.Readiness{inProgress, "NotReady", "Widget w: Ready=False: Unavailable: registry down"}},
		{"custom resource ready unknown", gizmo(3, 3, kcond(status.Ready, metav1.ConditionUnknown, "Progressing", "", 3)), status.Readiness{inProgress, "NotReady", "Widget w: Ready=Unknown: Progressing"}},
		{"custom resource reconciling", gizmo(3, 3,
			kcond(status.Ready, metav1.ConditionUnknown, "Progressing", "2 of 3", 3),
			kcond(status.Reconciling, metav1.ConditionTrue, "Progressing", "2 of 3", 3),
		), status.Readiness{inProgress, "Reconciling", "Widget w: reconciling: Progressing: 2 of 3"}},
		{"custom resource stalled", gizmo(3, 3,
			kcond(status.Ready, metav1.ConditionFalse, "Invalid", "spec.port: too large", 3),
			kcond(status.Reconciling, metav1.ConditionTrue, "Invalid", "spec.port: too large", 3),
			kcond(status.Stalled, metav1.ConditionTrue, "Invalid", "spec.port: too large", 3),
		), status.Readiness{failed, "Stalled", "Widget w is stalled: Invalid: spec.port: too large"}},
		{"custom resource Stalled=False", gizmo(3, 3,
			kcond(status.Ready, metav1.ConditionTrue, "Succeeded", "", 3),
			kcond(status.Stalled, metav1.ConditionFalse, "Fixed", "", 3),
		), status.Readiness{current, "Ready", "Widget w is ready: Succeeded"}},
		{"custom resource not ready, no reason or message", gizmo(3, 3, kcond(status.Ready, metav1.ConditionFalse, "", "", 3)), status.Readiness{inProgress, "NotReady", "Widget w: Ready=False"}},
		{"custom resource ready, no reason or message", gizmo(3, 3, kcond(status.Ready, metav1.ConditionTrue, "", "", 3)), status.Readiness{current, "Ready", "Widget w is ready"}},
		{"custom resource stalled, no reason or message", gizmo(3, 3, kcond(status.Stalled, metav1.ConditionTrue, "", "", 3)), status.Readiness{failed, "Stalled", "Widget w is stalled"}},
		{"custom resource reconciling, no reason or message", gizmo(3, 3, kcond(status.Reconciling, metav1.ConditionTrue, "", "", 3)), status.Readiness{inProgress, "Reconciling", "Widget w: reconciling"}},
		{"custom resource terminating", deleting(gizmo(3, 3, kcond(status.Ready, metav1.ConditionTrue, "Succeeded", "", 3))), status.Readiness{terminatingState, "Terminating", "Widget w is being deleted"}},
	}
	scheme := widget.Scheme()
	for _, tt := range tests {
		if _, ok := tt.obj.(*metav1.PartialObjectMetadata); ok {
			// No unstructured form to compare with.
			t.Run(tt.name, func(t *testing.T) {
				if diff := cmp.Diff(tt.want, status.ReadinessOf(tt.obj)); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			got := status.ReadinessOf(tt.obj)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("typed (-want +got):\n%s", diff)
			}
			// The same object as unstructured, as a dynamic client reads
			// it: the same readiness.
			u := toUnstructured(t, scheme, tt.obj)
			if diff := cmp.Diff(tt.want, status.ReadinessOf(u)); diff != "" {
				t.Errorf("unstructured (-want +got):\n%s", diff)
			}
		})
	}
}

// toUnstructured is obj as a dynamic client reads it: apiVersion and kind
// set, numbers decoded from JSON.
func toUnstructured(t *testing.T, scheme *runtime.Scheme, obj client.Object) *unstructured.Unstructured {
	t.Helper()
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		t.Fatal(err)
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	typed := &unstructured.Unstructured{Object: content}
	typed.SetGroupVersionKind(gvk)
	data, err := typed.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

package status

import (
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The rules of [ReadinessOf] for the built-in kinds, after the deletion
// check. Each learns from kstatus and `kubectl rollout status`; where they
// differ, the comment says why, and the package documentation's table
// lists it. Each kind checks its observedGeneration, then kstatus'
// Stalled and Reconciling conditions ([abnormalOf]), then its own status.

// The views of the built-in kinds' conditions as metav1.Condition.
func deploymentCond(c appsv1.DeploymentCondition) metav1.Condition {
	return cond(c.Type, c.Status, c.Reason, c.Message)
}

func statefulSetCond(c appsv1.StatefulSetCondition) metav1.Condition {
	return cond(c.Type, c.Status, c.Reason, c.Message)
}

func daemonSetCond(c appsv1.DaemonSetCondition) metav1.Condition {
	return cond(c.Type, c.Status, c.Reason, c.Message)
}

func replicaSetCond(c appsv1.ReplicaSetCondition) metav1.Condition {
	return cond(c.Type, c.Status, c.Reason, c.Message)
}

func jobCond(c batchv1.JobCondition) metav1.Condition {
	return cond(c.Type, c.Status, c.Reason, c.Message)
}

func pvcCond(c corev1.PersistentVolumeClaimCondition) metav1.Condition {
	return cond(c.Type, c.Status, c.Reason, c.Message)
}

func metaCond(c metav1.Condition) metav1.Condition { return c }

// replicasOf is spec.replicas: 1 when unset, as the controllers default it.
func replicasOf(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// available ends the rules of the kinds that run pods once nothing else
// is pending: InProgress ("Unavailable") until count of want units (pods,
// replicas) are available, then Current ("Available").
func available(kind, name string, count, want int32, unit string) Readiness {
	if count < want {
		return inProgress("Unavailable", kind, name, "%d of %d %s available", count, want, unit)
	}
	return Readiness{StateCurrent, "Available", fmt.Sprintf("%s: %d of %d %s available", subject(kind, name), count, want, unit)}
}

// noStatus is the readiness of an object whose controller has not written
// the status fields its rules read: not ready, since what is not read is
// not ready ("0 of 0 pods available" from an absent status is no answer).
func noStatus(kind, name string) Readiness {
	return inProgress("NoStatus", kind, name, "waiting for its controller to write its status")
}

// requiredStatus are the status fields, per built-in kind, that its
// controller always writes (no omitempty in the Go type) and its rules
// cannot do without: in an unstructured object, their absence is
// [noStatus], where the Go type would read zero.
var requiredStatus = map[schema.GroupKind][]string{
	{Group: appsv1.GroupName, Kind: "DaemonSet"}:  {"desiredNumberScheduled"},
	{Group: appsv1.GroupName, Kind: "ReplicaSet"}: {"replicas"},
}

// missingStatus reports whether content lacks a field of requiredStatus
// for gk.
func missingStatus(gk schema.GroupKind, content map[string]any) bool {
	for _, f := range requiredStatus[gk] {
		if _, ok := nestedInt64(content, "status", f); !ok {
			return true
		}
	}
	return false
}

func deploymentReadiness(d *appsv1.Deployment) Readiness {
	const kind = "Deployment"
	st := d.Status
	if st.ObservedGeneration < d.Generation {
		return staleGeneration(kind, d.Name, d.Generation, st.ObservedGeneration)
	}
	if r, ok := abnormalOf(kind, d.Name, st.Conditions, deploymentCond); ok {
		return r
	}
	for _, c := range st.Conditions {
		// The deployment controller sets Progressing=False with this
		// reason and keeps it until the spec changes: the rollout stopped.
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return Readiness{StateFailed, "ProgressDeadlineExceeded", subject(kind, d.Name) + ": " + reasonMessage("progress deadline exceeded", c.Message)}
		}
	}
	want := replicasOf(d.Spec.Replicas)
	var reason, detail string
	switch {
	case st.UpdatedReplicas < want:
		reason, detail = "RollingOut", fmt.Sprintf("%d of %d replicas updated", st.UpdatedReplicas, want)
	case st.Replicas > st.UpdatedReplicas:
		reason, detail = "RollingOut", fmt.Sprintf("%d old replicas pending termination", st.Replicas-st.UpdatedReplicas)
	case st.Replicas > want:
		reason, detail = "Scaling", fmt.Sprintf("%d extra replicas pending termination", st.Replicas-want)
	case st.AvailableReplicas < want:
		reason, detail = "Unavailable", fmt.Sprintf("%d of %d replicas available", st.AvailableReplicas, want)
	default:
		return Readiness{StateCurrent, "Available", fmt.Sprintf("%s: %d of %d replicas available", subject(kind, d.Name), st.AvailableReplicas, want)}
	}
	if d.Spec.Paused {
		// A paused Deployment does not roll out: say so, or the reader
		// waits for a rollout that is not coming. Not Failed: pausing is
		// deliberate, and resuming is someone's next step.
		return Readiness{StateInProgress, "Paused", subject(kind, d.Name) + " is paused: " + detail}
	}
	return inProgress(reason, kind, d.Name, "%s", detail)
}

func statefulSetReadiness(s *appsv1.StatefulSet) Readiness {
	const kind = "StatefulSet"
	st := s.Status
	if st.ObservedGeneration < s.Generation {
		return staleGeneration(kind, s.Name, s.Generation, st.ObservedGeneration)
	}
	if r, ok := abnormalOf(kind, s.Name, st.Conditions, statefulSetCond); ok {
		return r
	}
	want := replicasOf(s.Spec.Replicas)
	switch {
	case st.Replicas < want:
		return inProgress("Scaling", kind, s.Name, "%d of %d replicas created", st.Replicas, want)
	case st.Replicas > want:
		return inProgress("Scaling", kind, s.Name, "%d extra replicas pending termination", st.Replicas-want)
	}
	// OnDelete: pods are updated when someone deletes them, so there is no
	// update to wait for (kubectl refuses to watch such a rollout).
	if s.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType {
		var partition int32
		if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
			partition = *ru.Partition
		}
		if partition > 0 {
			// Only the pods at ordinals >= partition are updated, and
			// currentRevision stays behind for good.
			if toUpdate := max(want-partition, 0); st.UpdatedReplicas < toUpdate {
				return inProgress("RollingOut", kind, s.Name, "%d of %d replicas updated (partition %d)", st.UpdatedReplicas, toUpdate, partition)
			}
		} else if st.CurrentRevision != st.UpdateRevision {
			return inProgress("RollingOut", kind, s.Name, "%d of %d replicas updated%s", st.UpdatedReplicas, want, withName(" to revision", st.UpdateRevision, ""))
		}
	}
	return available(kind, s.Name, st.AvailableReplicas, want, "replicas")
}

func daemonSetReadiness(ds *appsv1.DaemonSet) Readiness {
	const kind = "DaemonSet"
	st := ds.Status
	if st.ObservedGeneration < ds.Generation {
		return staleGeneration(kind, ds.Name, ds.Generation, st.ObservedGeneration)
	}
	if reflect.ValueOf(st).IsZero() {
		// No field written: the DaemonSet controller always writes
		// observedGeneration and desiredNumberScheduled.
		return noStatus(kind, ds.Name)
	}
	if r, ok := abnormalOf(kind, ds.Name, st.Conditions, daemonSetCond); ok {
		return r
	}
	desired := st.DesiredNumberScheduled
	switch {
	case st.CurrentNumberScheduled < desired:
		return inProgress("Scaling", kind, ds.Name, "%d of %d nodes run a pod", st.CurrentNumberScheduled, desired)
	case ds.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType && st.UpdatedNumberScheduled < desired:
		return inProgress("RollingOut", kind, ds.Name, "%d of %d pods updated", st.UpdatedNumberScheduled, desired)
	case st.NumberReady < desired && st.NumberAvailable >= desired:
		// Available pods are ready ones held for minReadySeconds: a
		// status that says otherwise is not understood (kstatus:
		// LessReady).
		return inProgress("NotReady", kind, ds.Name, "%d of %d pods ready", st.NumberReady, desired)
	}
	return available(kind, ds.Name, st.NumberAvailable, desired, "pods")
}

func replicaSetReadiness(rs *appsv1.ReplicaSet) Readiness {
	const kind = "ReplicaSet"
	st := rs.Status
	if st.ObservedGeneration < rs.Generation {
		return staleGeneration(kind, rs.Name, rs.Generation, st.ObservedGeneration)
	}
	if st.ObservedGeneration == 0 && st.Replicas == 0 && len(st.Conditions) == 0 {
		// The ReplicaSet controller always writes observedGeneration.
		return noStatus(kind, rs.Name)
	}
	if r, ok := abnormalOf(kind, rs.Name, st.Conditions, replicaSetCond); ok {
		return r
	}
	for _, c := range st.Conditions {
		// Pods cannot be created (quota, admission): not Failed, the
		// controller keeps trying and a freed quota lets it through. The
		// message names the refusal; the reason stands in without one.
		if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
			why := c.Message
			if why == "" {
				why = c.Reason
			}
			return inProgress("ReplicaFailure", kind, rs.Name, "%s", detail("cannot create pods", "", why))
		}
	}
	want := replicasOf(rs.Spec.Replicas)
	switch {
	case st.Replicas < want:
		return inProgress("Scaling", kind, rs.Name, "%d of %d replicas created", st.Replicas, want)
	case st.Replicas > want:
		return inProgress("Scaling", kind, rs.Name, "%d extra replicas pending termination", st.Replicas-want)
	case st.ReadyReplicas < want && st.AvailableReplicas >= want:
		// As for a DaemonSet: available replicas are ready ones, so a
		// status without readyReplicas is not understood (kstatus:
		// LessReady).
		return inProgress("NotReady", kind, rs.Name, "%d of %d replicas ready", st.ReadyReplicas, want)
	}
	return available(kind, rs.Name, st.AvailableReplicas, want, "replicas")
}

func jobReadiness(j *batchv1.Job) Readiness {
	const kind = "Job"
	st := j.Status
	suspended := j.Spec.Suspend != nil && *j.Spec.Suspend
	if r, ok := abnormalOf(kind, j.Name, st.Conditions, jobCond); ok {
		return r
	}
	for _, c := range st.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed, batchv1.JobFailureTarget:
			// FailureTarget comes first, while the last pods terminate;
			// Failed follows for certain.
			reason := c.Reason
			if reason == "" && c.Message == "" && st.Failed > 0 {
				reason = fmt.Sprintf("%d pods failed", st.Failed)
			}
			return Readiness{StateFailed, "JobFailed", detail(subject(kind, j.Name)+" failed", reason, c.Message)}
		case batchv1.JobComplete:
			return Readiness{StateCurrent, "Complete", fmt.Sprintf("%s: complete, %d succeeded", subject(kind, j.Name), st.Succeeded)}
		case batchv1.JobSuspended:
			suspended = true
		}
	}
	if suspended {
		// kstatus calls a suspended Job Current; but its work is not done,
		// and whoever waits for it waits for that.
		return inProgress("Suspended", kind, j.Name, "suspended, %d succeeded", st.Succeeded)
	}
	if st.StartTime == nil && st.Active == 0 && st.Succeeded == 0 && st.Failed == 0 {
		// The job controller has not picked it up: nothing runs yet
		// (kstatus: JobNotStarted).
		return inProgress("NotStarted", kind, j.Name, "not started yet")
	}
	return inProgress("Running", kind, j.Name, "%d active, %d succeeded, %d failed", st.Active, st.Succeeded, st.Failed)
}

func pvcReadiness(pvc *corev1.PersistentVolumeClaim) Readiness {
	const kind = "PersistentVolumeClaim"
	if r, ok := abnormalOf(kind, pvc.Name, pvc.Status.Conditions, pvcCond); ok {
		return r
	}
	switch pvc.Status.Phase {
	case corev1.ClaimBound:
		return Readiness{StateCurrent, "Bound", subject(kind, pvc.Name) + ": bound to " + withName("volume", pvc.Spec.VolumeName, "a volume")}
	case corev1.ClaimLost:
		// The bound volume is gone: nothing brings it back.
		return Readiness{StateFailed, "ClaimLost", subject(kind, pvc.Name) + ": lost " + withName("its volume", pvc.Spec.VolumeName, "its volume")}
	}
	return inProgress("Pending", kind, pvc.Name, "waiting for a volume")
}

func serviceReadiness(svc *corev1.Service) Readiness {
	const kind = "Service"
	if r, ok := abnormalOf(kind, svc.Name, svc.Status.Conditions, metaCond); ok {
		return r
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return current(kind, svc.Name)
	}
	ingress := svc.Status.LoadBalancer.Ingress
	if len(ingress) == 0 {
		if len(svc.Spec.ExternalIPs) > 0 {
			// Traffic to the external IPs reaches the Service whether a
			// load balancer ever answers or not (Helm's rule too): waiting
			// for an ingress address could wait forever.
			return Readiness{StateCurrent, "Ready", subject(kind, svc.Name) + ": reachable at " + withName("external IP", svc.Spec.ExternalIPs[0], "its external IPs")}
		}
		return inProgress("Pending", kind, svc.Name, "waiting for a load balancer address")
	}
	addr := ingress[0].IP
	if addr == "" {
		addr = ingress[0].Hostname
	}
	return Readiness{StateCurrent, "Ready", subject(kind, svc.Name) + ": " + withName("load balancer at", addr, "load balancer ready")}
}

// crdGroupKind is the kind of a CustomResourceDefinition.
var crdGroupKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// crdReadiness reads a CustomResourceDefinition: Current once the API
// server serves it (Established=True), Failed when its names are refused
// (NamesAccepted=False: another CRD holds them; creating custom resources
// would fail or reach the other one) or it cannot be established (an
// invalid conversion webhook CA bundle), otherwise InProgress while it is
// being established. kstatus reads it the same way.
func crdReadiness(name string, content map[string]any) Readiness {
	const kind = "CustomResourceDefinition"
	conds := genericConditions(content)
	if r, ok := abnormal(kind, name, conds[Stalled], conds[Reconciling]); ok {
		return r
	}
	if c, ok := conds["NamesAccepted"]; ok && c.Status == metav1.ConditionFalse {
		return Readiness{StateFailed, "NamesNotAccepted", detail(subject(kind, name)+": names not accepted", c.Reason, c.Message)}
	}
	c, ok := conds["Established"]
	switch {
	case !ok:
		return inProgress("Establishing", kind, name, "waiting for the API server to establish it")
	case c.Status == metav1.ConditionTrue:
		return Readiness{StateCurrent, "Established", subject(kind, name) + ": established"}
	case c.Status == metav1.ConditionFalse && c.Reason != "Installing":
		return Readiness{StateFailed, "NotEstablished", detail(subject(kind, name)+": not established", c.Reason, c.Message)}
	}
	return inProgress("Establishing", kind, name, "%s", detail("being established", c.Reason, c.Message))
}

package status

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// The rules of [ReadinessOf] for the built-in kinds, after the deletion
// check. Each learns from kstatus and `kubectl rollout status`; where they
// differ, the comment says why.

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
	return Readiness{StateCurrent, "Available", fmt.Sprintf("%s %s: %d of %d %s available", kind, name, count, want, unit)}
}

func deploymentReadiness(d *appsv1.Deployment) Readiness {
	const kind = "Deployment"
	st := d.Status
	if st.ObservedGeneration < d.Generation {
		return staleGeneration(kind, d.Name, d.Generation, st.ObservedGeneration)
	}
	for _, c := range st.Conditions {
		// The deployment controller sets Progressing=False with this
		// reason and keeps it until the spec changes: the rollout stopped.
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return Readiness{StateFailed, "ProgressDeadlineExceeded", fmt.Sprintf("Deployment %s: %s", d.Name, reasonMessage("progress deadline exceeded", c.Message))}
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
		return Readiness{StateCurrent, "Available", fmt.Sprintf("Deployment %s: %d of %d replicas available", d.Name, st.AvailableReplicas, want)}
	}
	if d.Spec.Paused {
		// A paused Deployment does not roll out: say so, or the reader
		// waits for a rollout that is not coming. Not Failed: pausing is
		// deliberate, and resuming is someone's next step.
		return Readiness{StateInProgress, "Paused", fmt.Sprintf("Deployment %s is paused: %s", d.Name, detail)}
	}
	return inProgress(reason, kind, d.Name, "%s", detail)
}

func statefulSetReadiness(s *appsv1.StatefulSet) Readiness {
	const kind = "StatefulSet"
	st := s.Status
	if st.ObservedGeneration < s.Generation {
		return staleGeneration(kind, s.Name, s.Generation, st.ObservedGeneration)
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
			return inProgress("RollingOut", kind, s.Name, "%d of %d replicas updated to revision %s", st.UpdatedReplicas, want, st.UpdateRevision)
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
	desired := st.DesiredNumberScheduled
	switch {
	case st.CurrentNumberScheduled < desired:
		return inProgress("Scaling", kind, ds.Name, "%d of %d nodes run a pod", st.CurrentNumberScheduled, desired)
	case ds.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType && st.UpdatedNumberScheduled < desired:
		return inProgress("RollingOut", kind, ds.Name, "%d of %d pods updated", st.UpdatedNumberScheduled, desired)
	}
	return available(kind, ds.Name, st.NumberAvailable, desired, "pods")
}

func replicaSetReadiness(rs *appsv1.ReplicaSet) Readiness {
	const kind = "ReplicaSet"
	st := rs.Status
	if st.ObservedGeneration < rs.Generation {
		return staleGeneration(kind, rs.Name, rs.Generation, st.ObservedGeneration)
	}
	for _, c := range st.Conditions {
		// Pods cannot be created (quota, admission): not Failed, the
		// controller keeps trying and a freed quota lets it through.
		if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
			return inProgress("ReplicaFailure", kind, rs.Name, "cannot create pods: %s", c.Message)
		}
	}
	want := replicasOf(rs.Spec.Replicas)
	switch {
	case st.Replicas < want:
		return inProgress("Scaling", kind, rs.Name, "%d of %d replicas created", st.Replicas, want)
	case st.Replicas > want:
		return inProgress("Scaling", kind, rs.Name, "%d extra replicas pending termination", st.Replicas-want)
	}
	return available(kind, rs.Name, st.AvailableReplicas, want, "replicas")
}

func jobReadiness(j *batchv1.Job) Readiness {
	const kind = "Job"
	st := j.Status
	suspended := j.Spec.Suspend != nil && *j.Spec.Suspend
	for _, c := range st.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed, batchv1.JobFailureTarget:
			// FailureTarget comes first, while the last pods terminate;
			// Failed follows for certain.
			return Readiness{StateFailed, "JobFailed", fmt.Sprintf("Job %s failed: %s", j.Name, reasonMessage(c.Reason, c.Message))}
		case batchv1.JobComplete:
			return Readiness{StateCurrent, "Complete", fmt.Sprintf("Job %s: complete, %d succeeded", j.Name, st.Succeeded)}
		case batchv1.JobSuspended:
			suspended = true
		}
	}
	if suspended {
		// kstatus calls a suspended Job Current; but its work is not done,
		// and whoever waits for it waits for that.
		return inProgress("Suspended", kind, j.Name, "suspended, %d succeeded", st.Succeeded)
	}
	return inProgress("Running", kind, j.Name, "%d active, %d succeeded, %d failed", st.Active, st.Succeeded, st.Failed)
}

func pvcReadiness(pvc *corev1.PersistentVolumeClaim) Readiness {
	const kind = "PersistentVolumeClaim"
	switch pvc.Status.Phase {
	case corev1.ClaimBound:
		return Readiness{StateCurrent, "Bound", fmt.Sprintf("PersistentVolumeClaim %s: bound to volume %s", pvc.Name, pvc.Spec.VolumeName)}
	case corev1.ClaimLost:
		// The bound volume is gone: nothing brings it back.
		return Readiness{StateFailed, "ClaimLost", fmt.Sprintf("PersistentVolumeClaim %s: lost its volume %s", pvc.Name, pvc.Spec.VolumeName)}
	}
	return inProgress("Pending", kind, pvc.Name, "waiting for a volume")
}

func serviceReadiness(svc *corev1.Service) Readiness {
	const kind = "Service"
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return current(kind, svc.Name)
	}
	ingress := svc.Status.LoadBalancer.Ingress
	if len(ingress) == 0 {
		return inProgress("Pending", kind, svc.Name, "waiting for a load balancer address")
	}
	addr := ingress[0].IP
	if addr == "" {
		addr = ingress[0].Hostname
	}
	return Readiness{StateCurrent, "Ready", fmt.Sprintf("Service %s: load balancer at %s", svc.Name, addr)}
}

func podReadiness(p *corev1.Pod) Readiness {
	const kind = "Pod"
	st := p.Status
	// status.observedGeneration is written by kubelets with
	// PodObservedGenerationTracking; 0 means not tracked.
	if st.ObservedGeneration != 0 && st.ObservedGeneration < p.Generation {
		return staleGeneration(kind, p.Name, p.Generation, st.ObservedGeneration)
	}
	switch st.Phase {
	case corev1.PodSucceeded:
		return Readiness{StateCurrent, "Succeeded", fmt.Sprintf("Pod %s: succeeded", p.Name)}
	case corev1.PodFailed:
		// kstatus calls a failed Pod Current (it completed); a Pod that
		// failed does not run again, which is what a reader waits for.
		return Readiness{StateFailed, "PodFailed", fmt.Sprintf("Pod %s failed: %s", p.Name, reasonMessage(st.Reason, st.Message))}
	}
	for _, c := range st.Conditions {
		switch {
		case c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue:
			return Readiness{StateCurrent, "Ready", fmt.Sprintf("Pod %s is ready", p.Name)}
		case c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse:
			return inProgress("Pending", kind, p.Name, "not scheduled: %s", reasonMessage(c.Reason, c.Message))
		}
	}
	detail := "not ready"
	for _, cs := range append(append([]corev1.ContainerStatus(nil), st.InitContainerStatuses...), st.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			detail = fmt.Sprintf("container %s waiting: %s", cs.Name, w.Reason)
			break
		}
	}
	if st.Phase == corev1.PodRunning {
		return inProgress("NotReady", kind, p.Name, "%s", detail)
	}
	return inProgress("Pending", kind, p.Name, "%s", detail)
}

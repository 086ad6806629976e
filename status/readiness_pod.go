package status

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The rules of [ReadinessOf] for Pods, and how a Pod's containers explain
// its state.

func podCond(c corev1.PodCondition) metav1.Condition {
	return cond(c.Type, c.Status, c.Reason, c.Message)
}

func podReadiness(p *corev1.Pod) Readiness {
	const kind = "Pod"
	st := p.Status
	// status.observedGeneration is written by kubelets with
	// PodObservedGenerationTracking; 0 means not tracked.
	if st.ObservedGeneration != 0 && st.ObservedGeneration < p.Generation {
		return staleGeneration(kind, p.Name, p.Generation, st.ObservedGeneration)
	}
	if r, ok := abnormalOf(kind, p.Name, st.Conditions, podCond); ok {
		return r
	}
	switch st.Phase {
	case corev1.PodSucceeded:
		return Readiness{StateCurrent, "Succeeded", subject(kind, p.Name) + ": succeeded"}
	case corev1.PodFailed:
		// kstatus calls a failed Pod Current (it completed); a Pod that
		// failed does not run again, which is what a reader waits for.
		// Without a reason on the Pod (the kubelet sets one for
		// evictions and deadlines only), the failed container says why.
		why := reasonMessage(st.Reason, st.Message)
		if why == "" {
			why = exitOf(st)
		}
		return Readiness{StateFailed, "PodFailed", detail("Pod "+p.Name+" failed", "", why)}
	}
	for _, c := range st.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return Readiness{StateCurrent, "Ready", subject(kind, p.Name) + " is ready"}
		}
	}
	if cs := crashLooping(st); cs != nil {
		// Failed, as kstatus and Argo CD say: the kubelet restarts the
		// container with a growing back-off, and a reader waiting for
		// the Pod would wait for good. Not final: once the container
		// stays up and the Pod is ready, it reads Current again.
		return Readiness{StateFailed, "CrashLoopBackOff", subject(kind, p.Name) + ": " + crashDetail(cs)}
	}
	if st.Phase == corev1.PodPending || st.Phase == "" {
		// A Pod runs on a node: PodScheduled=False on a running Pod is
		// stale, not a reason.
		for _, c := range st.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				return inProgress("Pending", kind, p.Name, "%s", detail("not scheduled", c.Reason, c.Message))
			}
		}
	}
	detail := "not ready"
	for _, cs := range containerStatuses(st) {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			detail = subject("container", cs.Name) + " waiting: " + w.Reason
			break
		}
	}
	if st.Phase == corev1.PodRunning {
		return inProgress("NotReady", kind, p.Name, "%s", detail)
	}
	return inProgress("Pending", kind, p.Name, "%s", detail)
}

// containerStatuses lists a Pod's init containers, then its containers.
func containerStatuses(st corev1.PodStatus) []corev1.ContainerStatus {
	return append(append(make([]corev1.ContainerStatus, 0, len(st.InitContainerStatuses)+len(st.ContainerStatuses)),
		st.InitContainerStatuses...), st.ContainerStatuses...)
}

// crashLooping returns the first container, init containers first,
// waiting in CrashLoopBackOff, or nil.
func crashLooping(st corev1.PodStatus) *corev1.ContainerStatus {
	for _, cs := range containerStatuses(st) {
		if w := cs.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" {
			return &cs
		}
	}
	return nil
}

// crashDetail says which container crash-loops, how often it restarted
// and how it last ended.
func crashDetail(cs *corev1.ContainerStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is crash-looping (%d restarts", subject("container", cs.Name), cs.RestartCount)
	if t := cs.LastTerminationState.Terminated; t != nil {
		fmt.Fprintf(&b, ", last exit code %d", t.ExitCode)
		if t.Reason != "" {
			b.WriteString(": " + t.Reason)
		}
	}
	b.WriteString(")")
	return b.String()
}

// exitOf names the first container, init containers first, that exited
// with a code other than 0, its code and reason; "" when none did.
func exitOf(st corev1.PodStatus) string {
	for _, cs := range containerStatuses(st) {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			if t.Reason == "" {
				return fmt.Sprintf("%s exited with code %d", subject("container", cs.Name), t.ExitCode)
			}
			return fmt.Sprintf("%s exited with code %d (%s)", subject("container", cs.Name), t.ExitCode, t.Reason)
		}
	}
	return ""
}

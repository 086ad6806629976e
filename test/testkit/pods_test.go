package testkit_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/test/testkit"
)

func job(ns, name string, labels, annotations map[string]string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: new(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "migrate", Image: "migrate:1"}},
				},
			},
		},
	}
}

func pod(ns, name string, labels, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: annotations},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
	}
}

// waitJobCondition waits until job has condition cond True and returns it;
// it fails at once if the Job ends the other way.
func waitJobCondition(t *testing.T, job *batchv1.Job, cond batchv1.JobConditionType) batchv1.JobCondition {
	t.Helper()
	c := cluster.Client()
	other := map[batchv1.JobConditionType]batchv1.JobConditionType{batchv1.JobFailed: batchv1.JobComplete, batchv1.JobComplete: batchv1.JobFailed}[cond]
	var got batchv1.JobCondition
	eventually(t, 60*time.Second, "Job "+job.Name+" "+string(cond), func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return err
		}
		for _, jc := range job.Status.Conditions {
			if jc.Type == other && jc.Status == corev1.ConditionTrue {
				t.Fatalf("Job %s is %s (%s: %s), want %s", job.Name, other, jc.Reason, jc.Message, cond)
			}
			if jc.Type == cond && jc.Status == corev1.ConditionTrue {
				got = jc
				return nil
			}
		}
		return errorf("conditions %+v", job.Status.Conditions)
	})
	return got
}

func jobPods(t *testing.T, job *batchv1.Job) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := cluster.Client().List(t.Context(), &pods, client.InNamespace(job.Namespace), client.MatchingLabels{"job-name": job.Name}); err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// A Job whose pod is labelled to fail ends Failed with the Job
// controller's reason: BackoffLimitExceeded when its pods used up the
// backoff limit, PodFailurePolicy when a rule matched the exit code the
// annotation chose.
func TestJobWithFailingPodFails(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	fail := map[string]string{testkit.PodOutcomeLabel: testkit.PodOutcomeFail}

	t.Run("backoff limit", func(t *testing.T) {
		j := job(ns, "migrate", fail, map[string]string{
			testkit.PodExitCodeAnnotation: "3",
			testkit.PodMessageAnnotation:  "relation \"users\" already exists",
		})
		if err := c.Create(t.Context(), j); err != nil {
			t.Fatal(err)
		}
		cond := waitJobCondition(t, j, batchv1.JobFailed)
		if cond.Reason != batchv1.JobReasonBackoffLimitExceeded {
			t.Errorf("Failed reason %q (%s), want %q", cond.Reason, cond.Message, batchv1.JobReasonBackoffLimitExceeded)
		}
		if j.Status.Failed != 1 || j.Status.Succeeded != 0 {
			t.Errorf("Job counts failed=%d succeeded=%d, want 1 and 0", j.Status.Failed, j.Status.Succeeded)
		}
		pods := jobPods(t, j)
		if len(pods) != 1 {
			t.Fatalf("%d pods, want 1", len(pods))
		}
		p := pods[0]
		if p.Status.Phase != corev1.PodFailed || len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Terminated == nil {
			t.Fatalf("pod %s: phase %s, container statuses %+v; want Failed with a terminated container", p.Name, p.Status.Phase, p.Status.ContainerStatuses)
		}
		term := p.Status.ContainerStatuses[0].State.Terminated
		if term.ExitCode != 3 || term.Reason != "Error" || term.Message != `relation "users" already exists` {
			t.Errorf("terminated %+v, want exit code 3, reason Error and the annotated message", term)
		}
	})

	t.Run("pod failure policy", func(t *testing.T) {
		j := job(ns, "migrate-policy", fail, map[string]string{testkit.PodExitCodeAnnotation: "42"})
		j.Spec.BackoffLimit = new(int32(6))
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:      batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
		}}}
		if err := c.Create(t.Context(), j); err != nil {
			t.Fatal(err)
		}
		cond := waitJobCondition(t, j, batchv1.JobFailed)
		if cond.Reason != batchv1.JobReasonPodFailurePolicy || !strings.Contains(cond.Message, "exit code 42") {
			t.Errorf("Failed %q: %q, want reason %q naming exit code 42", cond.Reason, cond.Message, batchv1.JobReasonPodFailurePolicy)
		}
	})
}

// Jobs still complete by default, as before pods had outcomes; a pod
// labelled to succeed runs first, then succeeds after its delay.
func TestPodsSucceed(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()

	j := job(ns, "default", nil, nil)
	if err := c.Create(t.Context(), j); err != nil {
		t.Fatal(err)
	}

	wc, err := client.NewWithWatch(cluster.Config, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(t.Context(), &corev1.PodList{}, client.InNamespace(ns), client.MatchingFields{"metadata.name": "batch"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	p := pod(ns, "batch", map[string]string{testkit.PodOutcomeLabel: testkit.PodOutcomeSucceed},
		map[string]string{testkit.PodDelayAnnotation: "500ms"})
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	if err := c.Create(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	var phases []corev1.PodPhase
	var ready bool
	timeout := time.After(60 * time.Second)
	for !slices.Contains(phases, corev1.PodSucceeded) {
		select {
		case ev := <-w.ResultChan():
			got, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Error {
				t.Fatalf("watch event %s %T", ev.Type, ev.Object)
			}
			if len(phases) == 0 || phases[len(phases)-1] != got.Status.Phase {
				phases = append(phases, got.Status.Phase)
			}
			ready = ready || podReady(got)
			*p = *got
		case <-timeout:
			t.Fatalf("pod not Succeeded within 60s; phases seen %v", phases)
		}
	}
	if want := []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded}; !slices.Equal(phases, want) || !ready {
		t.Errorf("phases %v, ready once %t; want %v and Ready while Running", phases, ready, want)
	}
	if term := p.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 0 || term.Reason != "Completed" {
		t.Errorf("container state %+v, want terminated with exit code 0 (Completed)", p.Status.ContainerStatuses[0].State)
	}

	waitJobCondition(t, j, batchv1.JobComplete)
}

// A pod labelled to crash-loop is Running, never Ready, and its restart
// count goes up: what a Deployment's pod with a bad configuration shows.
func TestPodCrashLoops(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	d := deployment(ns, "web", 1)
	d.Spec.Template.Labels[testkit.PodOutcomeLabel] = testkit.PodOutcomeCrashLoop
	d.Spec.Template.Annotations = map[string]string{
		testkit.PodDelayAnnotation:    "200ms",
		testkit.PodExitCodeAnnotation: "137",
		testkit.PodReasonAnnotation:   "OOMKilled",
	}
	if err := c.Create(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	var p corev1.Pod
	eventually(t, 60*time.Second, "the pod restarted twice", func(ctx context.Context) error {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": "web"}); err != nil {
			return err
		}
		if len(pods.Items) != 1 || len(pods.Items[0].Status.ContainerStatuses) != 1 {
			return errorf("%d pods", len(pods.Items))
		}
		p = pods.Items[0]
		if n := p.Status.ContainerStatuses[0].RestartCount; n < 2 {
			return errorf("restart count %d", n)
		}
		return nil
	})
	cs := p.Status.ContainerStatuses[0]
	if p.Status.Phase != corev1.PodRunning || podReady(&p) || cs.Ready {
		t.Errorf("pod phase %s, ready %t, container ready %t; want Running and not ready", p.Status.Phase, podReady(&p), cs.Ready)
	}
	if cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" {
		t.Errorf("container state %+v, want waiting in CrashLoopBackOff", cs.State)
	}
	if last := cs.LastTerminationState.Terminated; last == nil || last.ExitCode != 137 || last.Reason != "OOMKilled" {
		t.Errorf("last state %+v, want terminated with exit code 137 (OOMKilled)", cs.LastTerminationState)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	if d.Status.AvailableReplicas != 0 {
		t.Errorf("Deployment has %d available replicas, want 0", d.Status.AvailableReplicas)
	}
}

// A pod labelled pending stays Pending with its containers waiting for the
// annotated reason, and starts once the label goes; a pod labelled
// not-ready runs and is never Ready.
func TestPodStaysPendingOrNotReady(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	pending := pod(ns, "pending", map[string]string{testkit.PodOutcomeLabel: testkit.PodOutcomePending},
		map[string]string{testkit.PodReasonAnnotation: "ImagePullBackOff", testkit.PodMessageAnnotation: `Back-off pulling image "app:1"`})
	pending.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "init:1"}}
	notReady := pod(ns, "not-ready", map[string]string{testkit.PodOutcomeLabel: testkit.PodOutcomeNotReady}, nil)
	for _, p := range []*corev1.Pod{pending, notReady} {
		if err := c.Create(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}

	eventually(t, 60*time.Second, "pending pod waiting with ImagePullBackOff", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pending), pending); err != nil {
			return err
		}
		if pending.Spec.NodeName == "" || len(pending.Status.ContainerStatuses) != 1 {
			return errorf("node %q, container statuses %+v", pending.Spec.NodeName, pending.Status.ContainerStatuses)
		}
		return nil
	})
	waiting := pending.Status.ContainerStatuses[0].State.Waiting
	if pending.Status.Phase != corev1.PodPending || waiting == nil || waiting.Reason != "ImagePullBackOff" || waiting.Message != `Back-off pulling image "app:1"` {
		t.Errorf("pending pod: phase %s, container state %+v; want Pending, waiting with the annotated reason and message",
			pending.Status.Phase, pending.Status.ContainerStatuses[0].State)
	}

	eventually(t, 60*time.Second, "not-ready pod Running", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(notReady), notReady); err != nil {
			return err
		}
		if notReady.Status.Phase != corev1.PodRunning {
			return errorf("phase %s", notReady.Status.Phase)
		}
		return nil
	})
	if cs := notReady.Status.ContainerStatuses; podReady(notReady) || len(cs) != 1 || cs[0].Ready || cs[0].State.Running == nil {
		t.Errorf("not-ready pod: ready %t, container statuses %+v; want not ready with its container running", podReady(notReady), cs)
	}

	// The outcome follows the label: without it the pending pod starts.
	patch := client.MergeFrom(pending.DeepCopy())
	delete(pending.Labels, testkit.PodOutcomeLabel)
	if err := c.Patch(t.Context(), pending, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "released pod Running and Ready", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pending), pending); err != nil {
			return err
		}
		if pending.Status.Phase != corev1.PodRunning || !podReady(pending) {
			return errorf("phase %s, ready %t", pending.Status.Phase, podReady(pending))
		}
		return nil
	})
	if init := pending.Status.InitContainerStatuses; len(init) != 1 || init[0].State.Terminated == nil || init[0].State.Terminated.Reason != "Completed" {
		t.Errorf("init container statuses %+v, want the init container Completed", init)
	}
}

func podReady(p *corev1.Pod) bool {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

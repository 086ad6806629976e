package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kopgo/kopgo/status"
)

// awaitReadiness reads obj until status.ReadinessOf reports want, and
// returns the readiness reached and the states seen on the way, in order,
// without repeats ("InProgress/RollingOut", ...).
func awaitReadiness(t *testing.T, obj client.Object, timeout time.Duration, want status.ReadinessState) (status.Readiness, []string) {
	t.Helper()
	c := cluster.Client()
	var seen []string
	var last status.Readiness
	eventually(t, timeout, fmt.Sprintf("%T %s %s", obj, obj.GetName(), want), func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		last = status.ReadinessOf(obj)
		if s := string(last.State) + "/" + last.Reason; len(seen) == 0 || seen[len(seen)-1] != s {
			seen = append(seen, s)
		}
		if last.State != want {
			return fmt.Errorf("%s (seen %v)", last.Message, seen)
		}
		return nil
	})
	return last, seen
}

// sameAsUnstructured checks that obj read as unstructured has the same
// readiness as typed (read just before; obj must be settled).
func sameAsUnstructured(t *testing.T, typed client.Object) {
	t.Helper()
	gvk, err := apiutil.GVKForObject(typed, cluster.Scheme())
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(typed), u); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(status.ReadinessOf(typed), status.ReadinessOf(u)); diff != "" {
		t.Errorf("readiness of the unstructured form (-typed +unstructured):\n%s", diff)
	}
}

func inProgressBefore(t *testing.T, seen []string) {
	t.Helper()
	if len(seen) < 2 || !strings.HasPrefix(seen[0], string(status.StateInProgress)+"/") {
		t.Errorf("states seen %v, want InProgress first", seen)
	}
}

// A Deployment is InProgress until kube-controller-manager and kwok have
// rolled it out, then Current; a new template makes it InProgress again
// at once (the controller has not observed the new generation), then
// Current again.
func TestReadinessDeploymentRollsOut(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	d := deployment(ns, "web", 2)
	if err := c.Create(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	if r := status.ReadinessOf(d); r.State != status.StateInProgress || r.Reason != "GenerationNotObserved" {
		t.Errorf("just created: %+v, want InProgress/GenerationNotObserved", r)
	}
	got, seen := awaitReadiness(t, d, 60*time.Second, status.StateCurrent)
	inProgressBefore(t, seen)
	if want := (status.Readiness{State: status.StateCurrent, Reason: "Available", Message: "Deployment web: 2 of 2 replicas available"}); got != want {
		t.Errorf("rolled out: %+v, want %+v", got, want)
	}
	sameAsUnstructured(t, d)
	t.Logf("first rollout: %v", seen)

	d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
	if err := c.Update(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	if r := status.ReadinessOf(d); r.State != status.StateInProgress {
		t.Errorf("just updated: %+v, want InProgress", r)
	}
	_, seen = awaitReadiness(t, d, 60*time.Second, status.StateCurrent)
	inProgressBefore(t, seen)
	t.Logf("second rollout: %v", seen)
}

// A Deployment whose pods cannot be scheduled becomes Failed once its
// progress deadline passes: kube-controller-manager sets Progressing=False
// with reason ProgressDeadlineExceeded.
func TestReadinessDeploymentProgressDeadline(t *testing.T) {
	ns := cluster.Namespace(t)
	d := deployment(ns, "stuck", 1)
	d.Spec.ProgressDeadlineSeconds = new(int32(2))
	d.Spec.Template.Spec.NodeSelector = map[string]string{"example.com/no-such-node": "true"}
	if err := cluster.Client().Create(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got, seen := awaitReadiness(t, d, 90*time.Second, status.StateFailed)
	inProgressBefore(t, seen)
	if got.Reason != "ProgressDeadlineExceeded" || !strings.HasPrefix(got.Message, "Deployment stuck: progress deadline exceeded: ") {
		t.Errorf("got %+v, want Failed/ProgressDeadlineExceeded", got)
	}
	sameAsUnstructured(t, d)
	t.Logf("Failed %s after creation with progressDeadlineSeconds=2; seen %v", time.Since(start).Round(100*time.Millisecond), seen)
}

// A Job is InProgress while its pod runs and Current once kwok completes
// the pod and the job controller marks the Job Complete.
func TestReadinessJobCompletes(t *testing.T) {
	ns := cluster.Namespace(t)
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "migrate"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "migrate", Image: "busybox:1.37"}},
		}}},
	}
	if err := cluster.Client().Create(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	if r := status.ReadinessOf(j); r.State != status.StateInProgress {
		t.Errorf("just created: %+v, want InProgress", r)
	}
	got, seen := awaitReadiness(t, j, 60*time.Second, status.StateCurrent)
	if want := (status.Readiness{State: status.StateCurrent, Reason: "Complete", Message: "Job migrate: complete, 1 succeeded"}); got != want {
		t.Errorf("completed: %+v, want %+v", got, want)
	}
	sameAsUnstructured(t, j)
	t.Logf("Job: %v", seen)
}

// A StatefulSet and a DaemonSet (one pod on each of the kwok nodes) roll
// out to Current.
func TestReadinessStatefulSetAndDaemonSet(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	template := func(app string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
		}
	}
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: new(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template: template("db"),
		},
	}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}, Template: template("agent")},
	}
	for _, obj := range []client.Object{s, ds} {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	got, seen := awaitReadiness(t, s, 60*time.Second, status.StateCurrent)
	inProgressBefore(t, seen)
	if want := "StatefulSet db: 2 of 2 replicas available"; got.Message != want {
		t.Errorf("StatefulSet message %q, want %q", got.Message, want)
	}
	sameAsUnstructured(t, s)
	got, seen = awaitReadiness(t, ds, 60*time.Second, status.StateCurrent)
	if want := "DaemonSet agent: 2 of 2 pods available"; got.Message != want {
		t.Errorf("DaemonSet message %q, want %q (seen %v)", got.Message, want, seen)
	}
	sameAsUnstructured(t, ds)
}

// A Service of type LoadBalancer is InProgress until something (a cloud
// controller; here the test) records the load balancer's address in its
// status; a ClusterIP Service is Current at once.
func TestReadinessLoadBalancerService(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	ports := []corev1.ServicePort{{Port: 80}}
	lb := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "public"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports, Selector: map[string]string{"app": "web"}},
	}
	plain := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "internal"},
		Spec:       corev1.ServiceSpec{Ports: ports, Selector: map[string]string{"app": "web"}},
	}
	for _, obj := range []client.Object{lb, plain} {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	if r := status.ReadinessOf(plain); r.State != status.StateCurrent {
		t.Errorf("ClusterIP Service: %+v, want Current", r)
	}
	if r := status.ReadinessOf(lb); r.State != status.StateInProgress || r.Reason != "Pending" {
		t.Errorf("LoadBalancer Service without address: %+v, want InProgress/Pending", r)
	}
	lb.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7", IPMode: new(corev1.LoadBalancerIPModeVIP)}}
	if err := c.Status().Update(t.Context(), lb); err != nil {
		t.Fatal(err)
	}
	got, _ := awaitReadiness(t, lb, 10*time.Second, status.StateCurrent)
	if want := "Service public: load balancer at 203.0.113.7"; got.Message != want {
		t.Errorf("message %q, want %q", got.Message, want)
	}
	sameAsUnstructured(t, lb)
}

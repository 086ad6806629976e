package reconciler_test

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// A declarative reconciler: the sync function returns the children a
// Widget wants and may set its status; Sync lists, applies and prunes.
func ExampleSync() {
	r := reconciler.Sync([]client.Object{&corev1.ConfigMap{}},
		func(_ context.Context, w *widget.Widget, observed reconciler.Children) ([]client.Object, reconciler.Action, error) {
			if _, ok := observed.Get(&corev1.ConfigMap{}, w.Name).(*corev1.ConfigMap); ok {
				status.MarkReady(w, "Synced", "config in place")
			}
			return []client.Object{&corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: w.Name}, // the Widget's namespace by default
				Data:       map[string]string{"size": fmt.Sprint(w.Spec.Size)},
			}}, reconciler.Done(), nil
		})
	// Run it like any Reconciler:
	//	kopcontroller.New[*widget.Widget]("widgets", r).Owns(&corev1.ConfigMap{}).Run(ctx)
	var _ reconciler.Reconciler[*widget.Widget] = r
}

// A sync function is a plain function of the parent and its children, so
// it is unit-tested without a cluster: the observed Children are a slice.
func ExampleChildren() {
	observed := reconciler.Children{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
	}
	for _, cm := range observed.List(&corev1.ConfigMap{}) {
		fmt.Println(cm.GetName())
	}
	fmt.Println(observed.Get(&corev1.Secret{}, "a") == nil)
	// Output:
	// a
	// b
	// true
}

// Per-child options travel in a wrapper, never in the object: the
// migration Job is recreated when its template changes (Jobs refuse that
// change in place), the Deployment waits until the Secret and the Job are
// ready (the Job complete), and the Secret, created by hand before the
// operator existed, is adopted.
func ExampleChild() {
	r := reconciler.Sync(
		[]client.Object{&appsv1.Deployment{}, &corev1.Secret{}, reconciler.Child(&batchv1.Job{}, reconciler.Recreate)},
		func(_ context.Context, w *widget.Widget, _ reconciler.Children) ([]client.Object, reconciler.Action, error) {
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: w.Name + "-db"}}
			migrate := migrationJob(w)
			return []client.Object{
				reconciler.Child(secret, reconciler.AdoptOrphans(true)),
				migrate,
				reconciler.Child(appDeployment(w), reconciler.DependsOn{secret, migrate}),
			}, reconciler.Done(), nil
		})
	fmt.Println(len(r.ChildKinds()), "child kinds to watch")
	// Output:
	// 3 child kinds to watch
}

// A Sync parent that must clean up what the garbage collector cannot (an
// entry in an external system) gets a type of its own: it embeds the
// Syncer, which does the syncing, and implements reconciler.Finalizer. The
// Builder finds both on its method set: the finalizer is added, Cleanup
// runs on deletion with the Env and, through Observe, the children.
func ExampleSyncer_Observe() {
	r := &widgetSync{
		Syncer: reconciler.Sync([]client.Object{&corev1.ConfigMap{}},
			func(_ context.Context, w *widget.Widget, _ reconciler.Children) ([]client.Object, reconciler.Action, error) {
				return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.Name + "-config"}}}, reconciler.Done(), nil
			}),
		external: map[string]bool{},
	}
	var _ reconciler.Finalizer[*widget.Widget] = r
	var _ reconciler.Owner = r // the child kinds, watched by the Builder
	r.external["w"] = true
	fmt.Println(len(r.ChildKinds()), len(r.external))
	// Output: 1 1
}

// widgetSync is a Syncer with a cleanup of its own.
type widgetSync struct {
	*reconciler.Syncer[*widget.Widget]
	external map[string]bool // an external system, for the example
}

// Cleanup implements reconciler.Finalizer.
func (s *widgetSync) Cleanup(ctx context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
	children, err := s.Observe(ctx, w, env)
	if err != nil {
		return reconciler.Done(), err
	}
	if s.external[w.Name] {
		delete(s.external, w.Name) // idempotent: may run again
		env.Recorder.Normal(w, nil, "Deregistered", "Cleanup", fmt.Sprintf("removed, %d children left to the garbage collector", len(children)))
		return reconciler.RequeueAfter(10 * time.Second), nil // not done: come back to check it is gone
	}
	return reconciler.Done(), nil // done: the finalizer is removed
}

func migrationJob(w *widget.Widget) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: w.Name + "-migrate"}, Spec: batchv1.JobSpec{
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "migrate", Image: "example.com/migrate:1"}},
		}},
	}}
}

func appDeployment(w *widget.Widget) *appsv1.Deployment {
	labels := map[string]string{"app": w.Name}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: w.Name}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/app:1"}}},
		},
	}}
}

// A sync function reads its observed children typed, and decides from a
// run-once Job's outcome.
func ExampleFind() {
	observed := reconciler.Children{&batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "web-migrate"},
		Status:     batchv1.JobStatus{Succeeded: 1, Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}},
	}}
	if job, ok := reconciler.Find[*batchv1.Job](observed, "web-migrate"); ok {
		fmt.Println(job.Name, status.ReadinessOf(job).State)
	}
	// Output: web-migrate Current
}

package testkit_test

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kopgo/kopgo/test/testkit"
)

// Start a control plane, create an object, and stop. In a test package use
// [testkit.Main] from TestMain instead.
func ExampleStart() {
	ctx := context.Background()
	c, err := testkit.Start(ctx, testkit.Options{})
	if err != nil {
		fmt.Println(err) // names the missing binary and `make testkit-bin`
		return
	}
	defer c.Stop()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello"}}
	if err := c.Client().Create(ctx, cm); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("created", cm.Name, "with uid", cm.UID != "")
}

// Run an operator against a full cluster until the cluster stops. In a test
// package, do this in the function given to [testkit.Main]; Stop (Main
// calls it after the tests) ends the manager first, while the API server
// still answers.
func ExampleCluster_Go() {
	ctx := context.Background()
	c, err := testkit.Start(ctx, testkit.Options{Full: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Stop()

	mgr, err := ctrl.NewManager(c.Config, ctrl.Options{Scheme: c.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	// ... register the operator's controllers with mgr ...
	c.Go(mgr.Start)
	// Anything else to undo first: c.Cleanup(func() { ... }), run before
	// the manager stops (last registered, first run).
}

// A Job whose pod fails with exit code 42: the Job controller's
// podFailurePolicy sees the code and fails the Job at once.
func Example_podOutcome() {
	ctx := context.Background()
	c, err := testkit.Start(ctx, testkit.Options{Full: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Stop()

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "migrate"},
		Spec: batchv1.JobSpec{
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:      batchv1.PodFailurePolicyActionFailJob,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
			}}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      map[string]string{testkit.PodOutcomeLabel: testkit.PodOutcomeFail},
					Annotations: map[string]string{testkit.PodExitCodeAnnotation: "42", testkit.PodDelayAnnotation: "1s"},
				},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "migrate", Image: "migrate:1"}},
				},
			},
		},
	}
	if err := c.Client().Create(ctx, job); err != nil {
		fmt.Println(err)
		return
	}
	// ... wait for the Job's Failed condition: reason PodFailurePolicy ...
}

package testkit_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/test/testkit"
)

// Put a fault-injecting proxy between a client and the API server, and write
// through it until the write took effect. An operator under test gets
// p.Config() (or --kubeconfig from p.WriteKubeconfig) in place of its own
// configuration; in a test, start the proxy from [testkit.Cluster.Config] or
// [testkit.Cluster.UserConfig] and close it with t.Cleanup(p.Close).
func ExampleStartFaultProxy() {
	ctx := context.Background()
	c, err := testkit.Start(ctx, testkit.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Stop()

	p, err := testkit.StartFaultProxy(c.Config, testkit.Faults{
		Seed:             42,
		Error500:         0.2,
		ResetAfterServer: 0.2, // a write whose answer was lost
		Latency:          0.5, Delay: 50 * time.Millisecond, Jitter: 50 * time.Millisecond,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	cl, err := client.New(p.Config(), client.Options{Scheme: c.Scheme()})
	if err != nil {
		fmt.Println(err)
		return
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello"}}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := cl.Create(ctx, cm.DeepCopy())
		// AlreadyExists: an earlier attempt was written, its answer lost.
		return err == nil || apierrors.IsAlreadyExists(err), nil
	})
	fmt.Println("created:", err == nil)
	fmt.Println("faults injected:", p.Stats().Injected() > 0)

	// An outage of this client only.
	p.Pause()
	p.Resume()
	// Back to clean forwarding.
	p.SetFaults(testkit.Faults{})
}

package testkit_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

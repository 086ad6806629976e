package v1alpha1_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/kopgo/kopgo/examples/webapp/api/v1alpha1"
	"github.com/kopgo/kopgo/status"
)

// A WebApp carries kstatus conditions that kopgo's status package reads
// and writes.
func Example() {
	app := &webappv1.WebApp{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Generation: 1},
		Spec:       webappv1.WebAppSpec{Image: "nginx:1.27", Port: 8080},
	}
	status.MarkReconciling(app, "RollingOut", "1 of 2 pods available")
	fmt.Println(status.IsTrue(app, status.Ready), status.Get(app, status.Ready).Status)
	status.MarkReady(app, "Available", "2 of 2 pods available")
	fmt.Println(status.IsTrue(app, status.Ready), status.Get(app, status.Reconciling) == nil)
	// Output:
	// false Unknown
	// true true
}

package reconciler_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/reconciler"
)

// A reconciler is a function (or a type with a Reconcile method) of the
// object and its Env.
func ExampleFunc() {
	r := reconciler.Func[*corev1.ConfigMap](func(_ context.Context, cm *corev1.ConfigMap, env *reconciler.Env) error {
		if cm.Data["url"] == "" {
			return koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "data.url: required"))
		}
		if cm.Data["ready"] != "true" {
			return koperrors.RequeueAfter(nil, 30*time.Second) // look again later
		}
		env.Recorder.Normal(cm, nil, "Checked", "Reconcile", "url is set")
		return nil
	})
	env := &reconciler.Env{Recorder: &recorder{}}
	err := r.Reconcile(context.Background(), &corev1.ConfigMap{Data: map[string]string{"url": "https://example.com"}}, env)
	d, _ := koperrors.RequeueAfterOf(err)
	fmt.Println(koperrors.Failed(err), d)
	// Output: false 30s
}

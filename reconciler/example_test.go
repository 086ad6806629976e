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
	r := reconciler.Func[*corev1.ConfigMap](func(_ context.Context, cm *corev1.ConfigMap, env *reconciler.Env) (reconciler.Action, error) {
		if cm.Data["url"] == "" {
			return reconciler.Done(), koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "data.url: required"))
		}
		if cm.Data["ready"] != "true" {
			return reconciler.RequeueAfter(30 * time.Second), nil // look again later: not a failure
		}
		env.Recorder.Normal(cm, nil, "Checked", "Reconcile", "url is set")
		return reconciler.Done(), nil
	})
	env := &reconciler.Env{Recorder: &recorder{}}
	action, err := r.Reconcile(context.Background(), &corev1.ConfigMap{Data: map[string]string{"url": "https://example.com"}}, env)
	fmt.Println(action, err)
	// Output: requeue after 30s <nil>
}

package operator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "github.com/kopgo/kopgo/examples/webapp/api/v1alpha1"
	"github.com/kopgo/kopgo/status"
)

// A Service someone else created first under the name the WebApp wants is
// never taken over: the WebApp reports the conflict, naming the field and
// its manager, and the Service keeps its selector and gets no controller.
func TestPreexistingChildIsNotTakenOver(t *testing.T) {
	ctx := t.Context()
	c := cluster.Client()
	ns, registry := cluster.Namespace(t), cluster.Namespace(t)
	name := fmt.Sprintf("webapp-preexisting-%d", runs.Add(1))
	label := "preexisting-test"
	startHostileOperator(t, name, registry, label+"="+ns)

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app.kubernetes.io/instance": "someone-else"},
			Ports:    []corev1.ServicePort{{Name: "web", Port: 80}},
		},
	}
	if err := c.Create(ctx, svc, client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}
	app := &webappv1.WebApp{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: map[string]string{label: ns}},
		Spec:       webappv1.WebAppSpec{Image: "nginx:1.27"},
	}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}

	var msg string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return false, err
		}
		msg = readyMessage(app)
		return strings.Contains(msg, ".spec.selector"), nil
	})
	if err != nil {
		t.Fatalf("WebApp never reported the conflict: %v; conditions %s", err, conditions(app))
	}
	if !strings.Contains(msg, `owned by "someone-else"`) || status.IsTrue(app, status.Ready) {
		t.Errorf("WebApp conditions %s, want Ready=False naming the field and its manager", conditions(app))
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Selector["app.kubernetes.io/instance"] != "someone-else" || metav1.GetControllerOf(svc) != nil {
		t.Errorf("Service taken over: selector %v, controller %v", svc.Spec.Selector, metav1.GetControllerOf(svc))
	}
}

// readyMessage is the message of the WebApp's Ready condition.
func readyMessage(app *webappv1.WebApp) string {
	for _, c := range app.Status.Conditions {
		if c.Type == status.Ready {
			return c.Message
		}
	}
	return ""
}

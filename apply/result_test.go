package apply_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopgo/kopgo/apply"
)

// Result.Into gives the object after the apply in the caller's form: from
// the server's answer, or, when nothing was sent, from the cache's typed
// copy; an object of another kind is an error, and so is a failed apply.
func TestResultInto(t *testing.T) {
	ns := cluster.Namespace(t)
	informers := startCache(t, apply.KeepManagedFields(owner))
	a, _ := newApplier(t, apply.WithCache(informers))
	intent := typedDeployment(ns, "web")
	for _, want := range []apply.Outcome{apply.Created, apply.Unchanged} {
		res, err := a.Apply(t.Context(), intent)
		if err != nil || res.Outcome != want {
			t.Fatalf("apply = %s, %v; want %s", res.Outcome, err, want)
		}
		var d appsv1.Deployment
		if err := res.Into(&d); err != nil {
			t.Fatalf("%s: Into: %v", want, err)
		}
		if d.Name != "web" || d.UID == "" || d.Kind != "Deployment" || len(d.Spec.Template.Spec.Containers) != 1 {
			t.Errorf("%s: Into gave %s %s uid %q with %d containers", want, d.Kind, d.Name, d.UID, len(d.Spec.Template.Spec.Containers))
		}
		var u unstructured.Unstructured
		if err := res.Into(&u); err != nil || u.GetResourceVersion() != d.ResourceVersion || u.GetKind() != "Deployment" {
			t.Errorf("%s: Into unstructured = %s %s at %s, %v; want the Deployment at %s", want, u.GetKind(), u.GetName(), u.GetResourceVersion(), err, d.ResourceVersion)
		}
		if err := res.Into(&corev1.ConfigMap{}); err == nil || !strings.Contains(err.Error(), "not a ConfigMap") {
			t.Errorf("%s: Into a ConfigMap = %v, want an error", want, err)
		}
		waitCached(t, informers, &appsv1.Deployment{ObjectMeta: d.ObjectMeta}, d.ResourceVersion)
	}
	if err := (apply.Result{}).Into(&appsv1.Deployment{}); err == nil {
		t.Error("Into of a failed apply's result succeeded")
	}
}

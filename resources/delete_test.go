package resources_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/resources"
	"github.com/kopgo/kopgo/scope"
)

func TestDelete(t *testing.T) {
	ns := cluster.Namespace(t)
	configMaps(t, ns, "a1", "a2")
	c, tr := countedClient(t)

	if deleted, err := resources.Delete[corev1.ConfigMap](t.Context(), c, scope.Namespaced(ns), "a1"); !deleted || err != nil {
		t.Errorf("Delete = %t, %v; want true, nil", deleted, err)
	}
	if deleted, err := resources.Delete[corev1.ConfigMap](t.Context(), c, scope.Namespaced(ns), "a1"); deleted || err != nil {
		t.Errorf("Delete of a gone object = %t, %v; want false, nil", deleted, err)
	}
	if n := requests(tr); n != 2 {
		t.Errorf("two Deletes sent %d requests, want 2", n)
	}
	if _, found, _ := resources.Find[corev1.ConfigMap](t.Context(), c, scope.Namespaced(ns), "a1"); found {
		t.Error("a1 still exists")
	}

	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(configMapKind)
	u.SetNamespace(ns)
	u.SetName("a2")
	if deleted, err := resources.DeleteObject(t.Context(), c, u, resources.GracePeriod(0), resources.Foreground); !deleted || err != nil {
		t.Errorf("DeleteObject(unstructured) = %t, %v; want true, nil", deleted, err)
	}
}

func TestDeletePreconditions(t *testing.T) {
	ns := cluster.Namespace(t)
	old := configMaps(t, ns, "a1")[0]
	c := cluster.Client()

	// The object is deleted and re-created under the same name.
	if err := c.Delete(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	current := configMaps(t, ns, "a1")[0]

	tests := []struct {
		name string
		pre  resources.Precondition
	}{
		{"stale UID", resources.PreconditionOf(old)},
		{"stale resourceVersion", resources.Precondition{UID: current.UID, ResourceVersion: old.ResourceVersion}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deleted, err := resources.Delete[corev1.ConfigMap](t.Context(), c, scope.Namespaced(ns), "a1", tt.pre)
			if deleted || koperrors.KindOf(err) != koperrors.Conflict {
				t.Errorf("Delete = %t, %v; want false and a Conflict", deleted, err)
			}
			got, err := resources.Get[corev1.ConfigMap](t.Context(), c, scope.Namespaced(ns), "a1")
			if err != nil || got.UID != current.UID || got.DeletionTimestamp != nil {
				t.Fatalf("the re-created object was touched: %v, %v", got, err)
			}
		})
	}

	deleted, err := resources.Delete[corev1.ConfigMap](t.Context(), c, scope.Namespaced(ns), "a1",
		resources.Precondition{UID: current.UID, ResourceVersion: current.ResourceVersion})
	if !deleted || err != nil {
		t.Errorf("Delete with a precondition that holds = %t, %v; want true, nil", deleted, err)
	}
}

func TestDeleteWithFinalizerThenPollUntilGone(t *testing.T) {
	ns := cluster.Namespace(t)
	c, tr := countedClient(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held", Finalizers: []string{"example.com/hold"}}}
	if err := c.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	if deleted, err := resources.DeleteObject(t.Context(), c, cm); !deleted || err != nil {
		t.Fatalf("DeleteObject = %t, %v", deleted, err)
	}

	// The finalizer holds it: the wait times out and says why.
	short, cancel := context.WithTimeout(t.Context(), 700*time.Millisecond)
	defer cancel()
	tr.Reset()
	last, err := resources.PollUntilGone[corev1.ConfigMap](short, c, scope.Namespaced(ns), "held", resources.Interval(100*time.Millisecond))
	reads := requests(tr)
	t.Logf("PollUntilGone for 700ms at 100ms: %d reads", reads)
	if koperrors.KindOf(err) != koperrors.Timeout || last == nil || last.DeletionTimestamp == nil {
		t.Fatalf("PollUntilGone = %v, %v; want the terminating object and a Timeout", last, err)
	}
	for _, want := range []string{"wait for deletion of ConfigMap " + ns + "/held: ", "deleting since", "finalizers [example.com/hold]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if reads < 4 || reads > 8 {
		t.Errorf("%d reads in 700ms at a 100ms interval, want 4 to 8", reads)
	}

	// Released, it goes.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
	if err := c.Patch(t.Context(), last, patch); err != nil {
		t.Fatal(err)
	}
	ctx, cancel2 := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel2()
	if last, err := resources.PollUntilGone[corev1.ConfigMap](ctx, c, scope.Namespaced(ns), "held"); last != nil || err != nil {
		t.Errorf("PollUntilGone after the finalizer went = %v, %v; want nil, nil", last, err)
	}
}

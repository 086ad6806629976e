package reconciler_test

import (
	"context"
	"fmt"

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
		func(_ context.Context, w *widget.Widget, observed reconciler.Children) ([]client.Object, error) {
			if _, ok := reconciler.ChildOf[*corev1.ConfigMap](observed, w.Name); ok {
				status.MarkReady(w, "Synced", "config in place")
			}
			return []client.Object{&corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: w.Name}, // the Widget's namespace by default
				Data:       map[string]string{"size": fmt.Sprint(w.Spec.Size)},
			}}, nil
		})
	// Run it like any Reconciler:
	//	kopcontroller.New[*widget.Widget]("widgets", r).Owns(&corev1.ConfigMap{}).Run(ctx)
	var _ reconciler.Reconciler[*widget.Widget] = r
}

// A SyncFunc is a plain function of the parent and its children, so it is
// unit-tested without a cluster: NewChildren builds the observed children.
func ExampleNewChildren() {
	observed, err := reconciler.NewChildren(widget.Scheme(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
	)
	if err != nil {
		panic(err)
	}
	for _, cm := range reconciler.ChildrenOf[*corev1.ConfigMap](observed) {
		fmt.Println(cm.Name)
	}
	fmt.Println(observed.Get(&corev1.Secret{}, "a") == nil)
	// Output:
	// a
	// b
	// true
}

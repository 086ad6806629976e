package status_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

func ExampleSetError() {
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: 4}}
	status.SetError(w, koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "spec.size -1: must be positive")))
	for _, c := range w.Status.Conditions {
		fmt.Println(c.Type, c.Status, c.Reason, c.Message, c.ObservedGeneration)
	}
	// Output:
	// Ready False Invalid spec.size -1: must be positive 4
	// Stalled True Invalid spec.size -1: must be positive 4
}

func ExampleMarkReady() {
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: 1}}
	status.MarkReconciling(w, "Progressing", "1/3 replicas ready")
	fmt.Println(len(w.Status.Conditions), status.IsReady(w))
	status.MarkReady(w, "Deployed", "3/3 replicas ready")
	fmt.Println(len(w.Status.Conditions), status.IsReady(w))
	// Output:
	// 2 false
	// 1 true
}

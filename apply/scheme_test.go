package apply_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/test/widget"
)

// An Applier built without a manager applies custom resources as typed
// objects: with WithScheme, or with the apiVersion and kind set in the
// object. With neither, the error says what to do.
func TestCustomResourceWithoutManager(t *testing.T) {
	ns := cluster.Namespace(t)
	withKind := func(name string) *widget.Widget {
		w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: widget.WidgetSpec{Size: 2}}
		w.SetGroupVersionKind(widget.GroupVersion.WithKind("Widget"))
		return w
	}
	tests := []struct {
		name   string
		opts   []apply.ApplierOption
		intent *widget.Widget
	}{
		{"WithScheme", []apply.ApplierOption{apply.WithScheme(widget.Scheme())}, &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "with-scheme"}, Spec: widget.WidgetSpec{Size: 2}}},
		{"apiVersion and kind set", nil, withKind("with-kind")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := apply.New(cluster.Config, owner, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []apply.Outcome{apply.Created, apply.Unchanged} {
				res, err := a.Apply(t.Context(), tt.intent)
				if err != nil || res.Outcome != want {
					t.Fatalf("apply = %s, %v; want %s", res.Outcome, err, want)
				}
				if res.Object().GetKind() != "Widget" {
					t.Errorf("result object kind %q", res.Object().GetKind())
				}
			}
		})
	}
	a, err := apply.New(cluster.Config, owner)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Apply(t.Context(), &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unknown"}})
	if koperrors.KindOf(err) != koperrors.Invalid || !strings.Contains(err.Error(), "apply.WithScheme") {
		t.Errorf("apply of an unregistered type = %v, want Invalid naming apply.WithScheme", err)
	}
	if _, err := apply.New(cluster.Config, owner, apply.WithScheme(nil)); koperrors.KindOf(err) != koperrors.Config {
		t.Errorf("New with a nil scheme = %v, want Kind Config", err)
	}
}

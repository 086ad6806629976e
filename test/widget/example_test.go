package widget_test

import (
	"fmt"

	"github.com/kopgo/kopgo/test/widget"
)

// The Widget CRD and a scheme that knows it, ready for testkit.Options.
func ExampleTestkitOptions() {
	opts := widget.TestkitOptions()
	crd := opts.CRDs[0]
	fmt.Println(crd.Name, crd.Spec.Scope, crd.Spec.Versions[0].Subresources.Status != nil)
	fmt.Println(opts.Scheme.Recognizes(widget.GroupVersion.WithKind("Widget")))
	// Output:
	// widgets.test.kopgo.dev Namespaced true
	// true
}

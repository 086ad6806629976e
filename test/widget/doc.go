// Package widget is a small custom resource for kopgo's tests and for users
// who want one in theirs: Widget has a spec, a status with a scalar,
// observedGeneration and kstatus conditions (implementing status.Setter), a
// CRD built in Go with a status subresource, and AddToScheme. Install it with
// testkit.Options{CRDs: []*apiextensionsv1.CustomResourceDefinition{widget.CRD()}}.
package widget

package widget

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kopgo/kopgo/test/testkit"
)

// Scheme returns a new scheme with client-go's kinds, apiextensions/v1 and
// Widget. Registering into a new scheme cannot fail; like client-go's own
// scheme setup, a failure would be a programming error and panics.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(AddToScheme(s))
	return s
}

// TestkitOptions returns testkit options with [Scheme] and the Widget CRD
// installed, for a test package's TestMain:
//
//	testkit.Main(m, widget.TestkitOptions(), func(c *testkit.Cluster) { cluster = c })
func TestkitOptions() testkit.Options {
	return testkit.Options{Scheme: Scheme(), CRDs: []*apiextensionsv1.CustomResourceDefinition{CRD()}}
}

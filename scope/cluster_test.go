package scope_test

import (
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, testkit.Options{}, func(c *testkit.Cluster) { cluster = c })
}

// The same cases against the scopes a real API server reports.
func TestCheckAgainstAPIServer(t *testing.T) {
	hc, err := rest.HTTPClientFor(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cluster.Config, hc)
	if err != nil {
		t.Fatal(err)
	}
	runCheckCases(t, mapper)
}

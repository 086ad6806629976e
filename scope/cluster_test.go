package scope_test

import (
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/scope"
	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, testkit.Options{}, func(c *testkit.Cluster) { cluster = c })
}

// dynamicMapper is controller-runtime's discovering RESTMapper, as a
// manager's client has.
func dynamicMapper(t *testing.T, cfg *rest.Config) apimeta.RESTMapper {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	return mapper
}

// The same cases as TestCheck, against the scopes a real API server reports
// through controller-runtime's dynamic RESTMapper.
func TestCheckAgainstAPIServer(t *testing.T) {
	runCheckCases(t, dynamicMapper(t, cluster.Config))
}

// Check answers from the mapper's discovery cache: once a group is known, a
// check, right or wrong, sends no request.
func TestCheckSendsNoRequest(t *testing.T) {
	cfg, traffic := cluster.CountedConfig()
	mapper := dynamicMapper(t, cfg)
	// Warm up: the first lookup discovers the API.
	for _, gvk := range []schema.GroupVersionKind{deployment, clusterRole, namespace} {
		if err := scope.Cluster.Check(mapper, gvk); err != nil && koperrors.KindOf(err) != koperrors.Invalid {
			t.Fatalf("warm-up Check(%s) = %v", gvk, err)
		}
	}
	t.Logf("discovery for Deployment, ClusterRole and Namespace: %d requests, %d bytes", traffic.Requests.Load(), traffic.Bytes.Load())
	traffic.Reset()

	for range 10 {
		if err := scope.Namespaced("web").Check(mapper, deployment); err != nil {
			t.Fatal(err)
		}
		if err := scope.Cluster.Check(mapper, clusterRole); err != nil {
			t.Fatal(err)
		}
		if err := scope.Cluster.Check(mapper, deployment); koperrors.KindOf(err) != koperrors.Invalid {
			t.Fatalf("Check(Cluster, Deployment) = %v, want an Invalid error", err)
		}
		if err := scope.Namespaced("web").Check(mapper, namespace); koperrors.KindOf(err) != koperrors.Invalid {
			t.Fatalf("Check(Namespaced, Namespace) = %v, want an Invalid error", err)
		}
	}
	if got := traffic.Requests.Load(); got != 0 {
		t.Errorf("40 checks of known kinds sent %d requests, want 0", got)
	}
}

// An unknown kind is not cached: each check asks discovery again, since the
// kind may have been installed since (a CRD). Logged for the record.
func TestCheckUnknownKindRequests(t *testing.T) {
	cfg, traffic := cluster.CountedConfig()
	mapper := dynamicMapper(t, cfg)
	if err := scope.Namespaced("web").Check(mapper, deployment); err != nil {
		t.Fatal(err)
	}
	traffic.Reset()
	for range 3 {
		if err := scope.Namespaced("web").Check(mapper, widget); !apimeta.IsNoMatchError(err) {
			t.Fatalf("Check(Widget) = %v, want a no-match error", err)
		}
	}
	t.Logf("3 checks of an unknown kind: %d requests, %d bytes", traffic.Requests.Load(), traffic.Bytes.Load())
}

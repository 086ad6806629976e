package crdtest_test

import (
	"testing"

	"github.com/kopgo/kopgo/test/testkit"
)

// cluster is a real kube-apiserver with testdata/gizmos.yaml installed,
// to compare the offline validator's answers with.
var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, testkit.Options{CRDPaths: []string{"testdata/gizmos.yaml"}}, func(c *testkit.Cluster) { cluster = c })
}

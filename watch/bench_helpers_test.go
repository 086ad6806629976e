package watch_test

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

func newBenchClient() (client.WithWatch, error) {
	return client.NewWithWatch(cluster.Config, client.Options{Scheme: cluster.Scheme()})
}

func contextWithCancel(b *testing.B) (context.Context, context.CancelFunc) {
	b.Helper()
	return context.WithCancel(b.Context())
}

package reconciler_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kopgo/kopgo/apply"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
)

// recorder is a minimal Recorder for the example.
type recorder struct{}

func (recorder) Normal(_, _ runtime.Object, reason, _, note string) {
	fmt.Println("event:", reason, note)
}
func (recorder) Warning(_, _ runtime.Object, reason, _, note string) {
	fmt.Println("warning:", reason, note)
}

// envFromManager is the Env kopgo's Builder gives a reconciler: mgr's
// clients and scheme, and an Applier on its cache.
func envFromManager(tb testing.TB, mgr manager.Manager, fieldOwner string, recorder observability.Recorder) *reconciler.Env {
	tb.Helper()
	applier, err := apply.New(mgr.GetConfig(), fieldOwner, apply.WithCluster(mgr))
	if err != nil {
		tb.Fatal(err)
	}
	if recorder == nil {
		recorder = &observability.FakeRecorder{}
	}
	return &reconciler.Env{
		Client: client.WithFieldOwner(mgr.GetClient(), fieldOwner), Reader: mgr.GetAPIReader(), Recorder: recorder,
		Scheme: mgr.GetScheme(), Applier: applier,
	}
}

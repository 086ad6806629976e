package controller_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/widget"
)

// completeRuns numbers the controllers of TestSyncCompleteCacheUnderRunAndSetup.
var completeRuns atomic.Int32

// liveCounting is a Syncer whose live reads (Env.Reader) are counted, and
// which remembers the Env's complete kinds.
type liveCounting struct {
	*reconciler.Syncer[*widget.Widget]
	reads    *atomic.Int32
	mu       *sync.Mutex
	complete *[]schema.GroupKind
}

func (s liveCounting) Reconcile(ctx context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
	s.mu.Lock()
	*s.complete = slices.Clone(env.CompleteKinds)
	s.mu.Unlock()
	e := *env
	e.Reader = countedReader{Reader: env.Reader, n: s.reads}
	return s.Syncer.Reconcile(ctx, w, &e)
}

type countedReader struct {
	client.Reader
	n *atomic.Int32
}

func (r countedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.n.Add(1)
	return r.Reader.Get(ctx, key, obj, opts...)
}

func (r countedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r.n.Add(1)
	return r.Reader.List(ctx, list, opts...)
}

// A Syncer under Run creates a new child without a live read: Run built
// the manager, and no selector filters the child kind's cache (only the
// reconciled kind's, which is not complete then). Under Setup, on a
// manager whose cache options the Builder cannot see, it reads the
// child's name live first, unless CompleteCache declares the kind.
func TestSyncCompleteCacheUnderRunAndSetup(t *testing.T) {
	configMaps := []schema.GroupKind{{Kind: "ConfigMap"}}
	tests := []struct {
		name     string
		setup    bool
		declare  bool
		complete []schema.GroupKind
		live     bool // whether the new child costs a live read
	}{
		{"run", false, false, configMaps, false},
		{"setup", true, false, nil, true},
		{"setup with CompleteCache", true, true, configMaps, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			s := liveCounting{
				Syncer: reconciler.Sync([]client.Object{&corev1.ConfigMap{}},
					func(_ context.Context, w *widget.Widget, _ reconciler.Children) ([]client.Object, reconciler.Action, error) {
						return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.Name + "-child"}, Data: map[string]string{"a": "b"}}}, reconciler.Done(), nil
					}),
				reads: &atomic.Int32{}, mu: &sync.Mutex{}, complete: &[]schema.GroupKind{},
			}
			// Controller names are unique per process: one per run of the test.
			b := kopcontroller.New[*widget.Widget](fmt.Sprintf("complete-cache-%d-%d", i, completeRuns.Add(1)), s).
				Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop=" + ns)
			if tt.declare {
				b = b.CompleteCache(&corev1.ConfigMap{})
			}
			if tt.setup {
				mgr := newManager(t)
				if err := b.Setup(mgr); err != nil {
					t.Fatal(err)
				}
				startManager(t, mgr)
			} else {
				run(t, b.Config(cluster.Config))
			}
			w := createWidget(t, ns, "w", ns)
			eventually(t, 20*time.Second, "Ready", readyIs(t, w, metav1.ConditionTrue, ""))
			if err := cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "w-child"}, &corev1.ConfigMap{}); err != nil {
				t.Fatalf("the child: %v", err)
			}
			if n := s.reads.Load(); (n > 0) != tt.live {
				t.Errorf("the Syncer read the API server %d times, want live reads: %t", n, tt.live)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if !slices.Equal(*s.complete, tt.complete) {
				t.Errorf("Env.CompleteKinds = %v, want %v", *s.complete, tt.complete)
			}
		})
	}
}

package status_test

import (
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, widget.TestkitOptions(), func(c *testkit.Cluster) { cluster = c })
}

const owner = "widget-controller"

// newWidget creates a Widget named name in a fresh namespace.
func newWidget(t *testing.T, name string) *widget.Widget {
	t.Helper()
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace(t), Name: name}, Spec: widget.WidgetSpec{Size: 1}}
	if err := cluster.Client().Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

// read returns the Widget as stored (the admin client reads the API
// server, not a cache).
func read(t *testing.T, w *widget.Widget) *widget.Widget {
	t.Helper()
	var got widget.Widget
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(w), &got); err != nil {
		t.Fatal(err)
	}
	return &got
}

// countingClient is a client whose requests are counted; it is warmed up
// (discovery done) and the counter reset.
func countingClient(t *testing.T, warm client.Object) (client.Client, *atomic.Int64) {
	t.Helper()
	cfg, traffic := cluster.CountedConfig()
	c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.IsObjectNamespaced(warm); err != nil {
		t.Fatal(err)
	}
	traffic.Reset()
	return c, &traffic.Requests
}

// gadget has conditions but no status.observedGeneration: a [status.Setter]
// that is not an ObservedGenerationAccessor.
type gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            struct {
		Conditions []metav1.Condition `json:"conditions,omitempty"`
	} `json:"status"`
}

func (g *gadget) GetConditions() []metav1.Condition  { return g.Status.Conditions }
func (g *gadget) SetConditions(c []metav1.Condition) { g.Status.Conditions = c }

func (g *gadget) DeepCopyObject() runtime.Object {
	out := *g
	g.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = append([]metav1.Condition(nil), g.Status.Conditions...)
	return &out
}

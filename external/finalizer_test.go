package external_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// The first reconcile creates the resource, then the system refuses for
// good to show it (a 403 on the Observe that follows the create): the
// object is Stalled, keeps kopgo's finalizer, and its deletion deletes the
// resource. Before, the loop took a terminal failure of the reconcile that
// added its finalizer for "nothing was made" and removed the finalizer:
// the object went at once, with 0 DELETEs, and the resource stayed at the
// system (found by a user's run of docs/external.md).
func TestTerminalAfterCreateKeepsTheFinalizer(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	var refused atomic.Bool
	s.before = func(op, _ string) error {
		if op == "observe" && refused.CompareAndSwap(false, true) {
			return answer(http.StatusForbidden, "")
		}
		return nil
	}
	start(t, "ext-terminal-create", ns, external.New(connectTo(finder{s})), &observability.FakeRecorder{})
	w := newWidgets(t, ns, 1, nil)[0]
	eventually(t, 30*time.Second, "Stalled after its create", func() error {
		c := status.Get(get(t, w), status.Stalled)
		if c == nil || c.Status != "True" || s.count("create") != 1 {
			return fmt.Errorf("Stalled %v, %d creates", c, s.count("create"))
		}
		return nil
	})
	if err := cluster.Client().Delete(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the object and its resource gone", func() error {
		err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(w), &widget.Widget{})
		if !apierrors.IsNotFound(err) || len(s.live()) > 0 {
			return fmt.Errorf("object: %w; resources at the system: %v; %d DELETEs", err, s.live(), s.count("delete"))
		}
		return nil
	})
	if n := s.count("delete"); n != 1 {
		t.Errorf("%d DELETEs, want 1", n)
	}
}

package external_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopcontroller "github.com/kopgo/kopgo/controller"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// startWith is start with the Builder's settings changed by with (its
// concurrency, its References).
func startWith(t *testing.T, name, ns string, r *external.Reconciler[*widget.Widget],
	with func(*kopcontroller.Builder[*widget.Widget]) *kopcontroller.Builder[*widget.Widget]) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	b := kopcontroller.New[*widget.Widget](name, r).Config(cluster.Config).Scheme(scheme).
		Recorder(&observability.FakeRecorder{}).LabelSelector("ext=" + ns).Concurrency(8)
	b = with(b)
	go func() { done <- b.Run(ctx) }()
	var once sync.Once
	t.Cleanup(func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("Run did not return after its context ended")
			}
		})
	})
}

// setAnnotation sets (or, with "", removes) the external name on w.
func setAnnotation(t *testing.T, w *widget.Widget, id string) {
	t.Helper()
	got := get(t, w)
	if id == "" {
		delete(got.Annotations, external.NameAnnotation)
	} else {
		got.Annotations[external.NameAnnotation] = id
	}
	if err := cluster.Client().Update(t.Context(), got); err != nil {
		t.Fatal(err)
	}
}

// deleteAndWait deletes ws and waits until they are gone.
func deleteAndWait(t *testing.T, ws ...*widget.Widget) {
	t.Helper()
	for _, w := range ws {
		if err := cluster.Client().Delete(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "deleted Widgets gone", func() error {
		for _, w := range ws {
			err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(w), &widget.Widget{})
			if koperrors.KindOf(err) != koperrors.NotFound {
				return fmt.Errorf("%s still there (%w)", w.Name, err)
			}
		}
		return nil
	})
}

// The annotation removed by a user: the resource made for the object is
// found and recorded again, not created a second time. Before: a second
// resource beside the first (creates 3, two resources with w000's key).
func TestAnnotationRemovedNoSecondResource(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	start(t, "ext-id-removed", ns, external.New(connectTo(finder{s})), &observability.FakeRecorder{})
	ws := newWidgets(t, ns, 2, nil)
	ids := allReady(t, ws, 30*time.Second)
	setAnnotation(t, ws[0], "")
	eventually(t, 20*time.Second, "the resource recorded again", func() error {
		if got := get(t, ws[0]).Annotations[external.NameAnnotation]; got != ids[0] {
			return fmt.Errorf("annotation %q, want %q", got, ids[0])
		}
		return nil
	})
	if got := s.count("create"); got != 2 {
		t.Errorf("creates: %d, want 2", got)
	}
	if diff := cmp.Diff(keysOf(ws), s.live()); diff != "" {
		t.Errorf("resources by key (-want +got):\n%s", diff)
	}
}

// The annotation edited to a typo: the object is Stalled naming the
// resource made for it, nothing is created, and deleting the object deletes
// that resource (not orphaned). Before: a second resource was created and
// recorded, and the original stayed at the provider after the deletion.
func TestAnnotationEditedNoOrphan(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	start(t, "ext-id-typo", ns, external.New(connectTo(finder{s})), &observability.FakeRecorder{})
	ws := newWidgets(t, ns, 1, nil)
	ids := allReady(t, ws, 30*time.Second)
	setAnnotation(t, ws[0], ids[0]+"-typo")
	eventually(t, 20*time.Second, "Stalled ExternalNameConflict", func() error {
		c := status.Get(get(t, ws[0]), status.Stalled)
		if c == nil || c.Reason != "ExternalNameConflict" || !strings.Contains(c.Message, ids[0]) {
			return fmt.Errorf("Stalled is %v", c)
		}
		return nil
	})
	if got := s.count("create"); got != 1 {
		t.Errorf("creates: %d, want 1", got)
	}
	deleteAndWait(t, ws[0])
	if s.has(string(ws[0].UID)) {
		t.Errorf("resource %s of the deleted Widget left at the provider (orphaned)", ids[0])
	}
	if got := s.count("create"); got != 1 {
		t.Errorf("creates: %d, want 1", got)
	}
}

// The annotation removed and the object deleted before any reconcile:
// Cleanup without an annotation asks Find and deletes what it finds.
func TestCleanupWithoutAnnotationFinds(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	ws := newWidgets(t, ns, 1, nil)
	s.res["made-for-it"] = &resource{key: string(ws[0].UID), size: 1}
	start(t, "ext-id-cleanup", ns, external.New(connectTo(finder{s})), &observability.FakeRecorder{})
	eventually(t, 20*time.Second, "Ready", func() error {
		if !status.IsTrue(get(t, ws[0]), status.Ready) {
			return fmt.Errorf("not Ready")
		}
		return nil
	})
	if got := get(t, ws[0]).Annotations[external.NameAnnotation]; got != "made-for-it" {
		t.Errorf("recorded %q, want the resource found", got)
	}
	setAnnotation(t, ws[0], "")
	deleteAndWait(t, ws[0])
	if s.has(string(ws[0].UID)) {
		t.Error("the resource made for the Widget is left at the provider")
	}
	if got := s.count("create"); got != 0 {
		t.Errorf("creates: %d, want 0", got)
	}
}

// A manifest copied with the annotation: the copy is Stalled naming both
// objects; the original's resource is neither resized nor deleted through
// it. Before: the copy adopted the resource, resized it 1 -> 5, and
// deleting the copy deleted it.
func TestCopiedAnnotationRefused(t *testing.T) {
	ns := cluster.Namespace(t)
	s := newSystem()
	start(t, "ext-id-copy", ns, external.New(connectTo(finder{s})), &observability.FakeRecorder{})
	ws := newWidgets(t, ns, 1, nil)
	ids := allReady(t, ws, 30*time.Second)
	cp := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "copy", Labels: map[string]string{"ext": ns},
		Annotations: map[string]string{external.NameAnnotation: ids[0]}}, Spec: widget.WidgetSpec{Size: 5}}
	if err := cluster.Client().Create(t.Context(), cp); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the copy Stalled naming both", func() error {
		c := status.Get(get(t, cp), status.Stalled)
		if c == nil || c.Reason != "ExternalResourceOfAnotherObject" {
			return fmt.Errorf("Stalled is %v", c)
		}
		for _, part := range []string{ns + "/" + ws[0].Name, ns + "/copy", ids[0]} {
			if !strings.Contains(c.Message, part) {
				return fmt.Errorf("message %q does not name %q", c.Message, part)
			}
		}
		return nil
	})
	deleteAndWait(t, cp)
	if size, ok := s.sizeOf(ids[0]); !ok || size != 1 {
		t.Errorf("the original's resource %s: exists %v, size %d; want it untouched (size 1)", ids[0], ok, size)
	}
	if got, updates := s.count("delete"), s.count("update"); got != 0 || updates != 0 {
		t.Errorf("deletes %d, updates %d; want 0 and 0", got, updates)
	}
	if got := s.count("create"); got != 1 {
		t.Errorf("creates: %d, want 1", got)
	}
}

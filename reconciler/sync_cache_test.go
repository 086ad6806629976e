package reconciler_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// configMaps is the kind list of an Env whose cache holds every ConfigMap.
var configMaps = []schema.GroupKind{{Kind: "ConfigMap"}}

// A new child costs a live read (is the name free?) unless the cache of its
// kind is complete (Env.CompleteKinds): then the cache's "not found" is
// the answer, and the child costs its apply alone.
func TestSyncCompleteCacheCreatesWithoutLiveRead(t *testing.T) {
	tests := []struct {
		name     string
		complete []schema.GroupKind
		reads    int64
	}{
		{"cache maybe filtered (default)", nil, 1},
		{"complete cache", configMaps, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}})
			h.env.CompleteKinds = tt.complete
			h.setDesired(func(*widget.Widget) []client.Object { return []client.Object{configMap("a", nil)} })
			h.reconcile()
			h.settle(inNs(h.ns, configMap("a", nil)))

			h.setDesired(func(*widget.Widget) []client.Object {
				return []client.Object{configMap("a", nil), configMap("b", map[string]string{"new": "yes"})}
			})
			h.traffic.Reset()
			h.reconcile()
			reads := h.traffic.Requests.Load() - h.traffic.Writes.Load()
			if reads != tt.reads || h.traffic.Writes.Load() != 2 {
				t.Errorf("a sync creating one child sent %d reads and %d writes, want %d reads and 2 writes (its apply, the parent's status)",
					reads, h.traffic.Writes.Load(), tt.reads)
			}
			b := inNs(h.ns, configMap("b", nil))
			get(t, b)
			if !metav1.IsControlledBy(b, h.getWidget()) || b.Data["new"] != "yes" {
				t.Errorf("child b: owners %v, data %v", b.OwnerReferences, b.Data)
			}
		})
	}
}

// With a complete cache, an object someone else made before the reconcile
// is in the cache: it is refused without a live read and without a write,
// as with a live read.
func TestSyncCompleteCacheRefusesWithoutLiveRead(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}})
	h.env.CompleteKinds = configMaps
	reads := &countingReader{Reader: h.env.Reader}
	h.env.Reader = reads
	orphan := inNs(h.ns, configMap("orphan", map[string]string{"theirs": "1"}))
	if err := cluster.Client().Create(t.Context(), orphan, client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	h.settle(orphan)
	h.setDesired(func(*widget.Widget) []client.Object {
		return []client.Object{configMap("orphan", map[string]string{"mine": "1"}), configMap("fresh", nil)}
	})
	h.reconcile() // terminal: reported in status

	w := h.getWidget()
	stalled := status.Get(w, status.Stalled)
	want := "desired child ConfigMap " + h.ns + "/orphan: the object of that name has no controller and Sync never takes over an object it did not create"
	if stalled == nil || stalled.Status != metav1.ConditionTrue || !strings.Contains(stalled.Message, want) {
		t.Errorf("Stalled = %s, want True naming %q", conditionOf(w, status.Stalled), want)
	}
	got := orphan.DeepCopy()
	get(t, got)
	if got.ResourceVersion != orphan.ResourceVersion {
		t.Errorf("the orphan was written: owners %v, labels %v, data %v", got.OwnerReferences, got.Labels, got.Data)
	}
	get(t, inNs(h.ns, configMap("fresh", nil)))
	if n := reads.n.Load(); n != 0 {
		t.Errorf("Sync read the API server %d times, want 0: the complete cache answers", n)
	}
}

// With a complete cache Sync trusts the cache's "not found", which lags
// behind the API server: an object created in that window, after the
// cache looked and before the apply, is taken over by the apply
// (server-side apply has no create-only precondition). The Applier knows
// the objects it created itself, so it tells the two apart by the UID the
// API server answers with: someone else's object is disowned again at once
// (controller reference and owner label removed; the values the apply set
// stay, the object's own stay too), and the parent is Stalled once the
// cache shows the object; our own child, not yet in the cache, is simply
// ours. Neither needs a live read.
func TestSyncCompleteCacheLagging(t *testing.T) {
	t.Run("someone else's object appeared", func(t *testing.T) {
		h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}})
		theirs := inNs(h.ns, configMap("contested", map[string]string{"theirs": "1"}))
		if err := cluster.Client().Create(t.Context(), theirs, client.FieldOwner("someone")); err != nil {
			t.Fatal(err)
		}
		env := lagging(t, h)
		r := reconciler.Sync([]client.Object{&corev1.ConfigMap{}}, func(context.Context, *widget.Widget, reconciler.Children) ([]client.Object, reconciler.Action, error) {
			return []client.Object{configMap("contested", map[string]string{"mine": "1"})}, reconciler.Done(), nil
		})
		w := h.getWidget()
		_, err := r.Reconcile(t.Context(), w, env)
		if err == nil || koperrors.IsTerminal(err) || koperrors.KindOf(err) != koperrors.Conflict || !strings.Contains(err.Error(), `created by "someone" while Sync was creating it`) {
			t.Errorf("Reconcile = %v, want a retryable Conflict naming the other field manager", err)
		}
		got := theirs.DeepCopy()
		get(t, got)
		if len(got.OwnerReferences) > 0 || got.Labels[ownerLabel] != "" {
			t.Errorf("the object keeps Sync's claim: owners %v, labels %v", got.OwnerReferences, got.Labels)
		}
		if got.Data["theirs"] != "1" || got.Data["mine"] != "1" {
			t.Errorf("data = %v, want theirs=1 kept and mine=1 (the apply's, not undone)", got.Data)
		}
		if n := env.Reader.(*countingReader).n.Load(); n != 0 {
			t.Errorf("Sync read the API server %d times, want 0", n)
		}

		// Once the cache shows the object, it is refused as any other.
		h.env.CompleteKinds = configMaps
		h.setDesired(func(*widget.Widget) []client.Object {
			return []client.Object{configMap("contested", map[string]string{"mine": "1"})}
		})
		h.settle(got)
		h.reconcile()
		w = h.getWidget()
		want := "desired child ConfigMap " + h.ns + "/contested: the object of that name has no controller"
		if stalled := status.Get(w, status.Stalled); stalled == nil || stalled.Status != metav1.ConditionTrue || !strings.Contains(stalled.Message, want) {
			t.Errorf("Stalled = %s, want True naming %q", conditionOf(w, status.Stalled), want)
		}
	})
	t.Run("our own child, not yet in the cache", func(t *testing.T) {
		h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}})
		env := lagging(t, h)
		r := reconciler.Sync([]client.Object{&corev1.ConfigMap{}}, func(context.Context, *widget.Widget, reconciler.Children) ([]client.Object, reconciler.Action, error) {
			return []client.Object{configMap("mine", map[string]string{"mine": "1"})}, reconciler.Done(), nil
		})
		w := h.getWidget()
		for i := range 2 { // the second time, the cache still does not show the child
			if _, err := r.Reconcile(t.Context(), w, env); err != nil {
				t.Errorf("Reconcile %d = %v, want nil", i+1, err)
			}
		}
		got := inNs(h.ns, configMap("mine", nil))
		get(t, got)
		if !metav1.IsControlledBy(got, w) || got.Labels[ownerLabel] == "" {
			t.Errorf("our child lost its claim: owners %v, labels %v", got.OwnerReferences, got.Labels)
		}
		if n := env.Reader.(*countingReader).n.Load(); n != 0 {
			t.Errorf("Sync read the API server %d times, want 0", n)
		}
	})
}

// lagging returns an Env like h's whose cache, complete for ConfigMaps,
// does not show any ConfigMap yet (its Applier's neither), and whose live
// reads are counted.
func lagging(t *testing.T, h *syncHarness) *reconciler.Env {
	t.Helper()
	hiding := laggingClient{Client: h.env.Client}
	applier, err := apply.New(cluster.Config, "sync-test", apply.WithScheme(cluster.Scheme()), apply.WithCache(hiding))
	if err != nil {
		t.Fatal(err)
	}
	env := *h.env
	env.Client, env.Applier, env.Reader, env.CompleteKinds = hiding, applier, &countingReader{Reader: h.env.Reader}, configMaps
	return &env
}

// laggingClient is a client whose cache shows no object yet: Get finds
// nothing, List lists nothing.
type laggingClient struct{ client.Client }

func (c laggingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return hidingClient(c).Get(ctx, key, obj, opts...)
}

func (laggingClient) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

// countingReader counts the reads it passes on.
type countingReader struct {
	client.Reader
	n atomic.Int64
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.n.Add(1)
	return r.Reader.Get(ctx, key, obj, opts...)
}

func (r *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r.n.Add(1)
	return r.Reader.List(ctx, list, opts...)
}

package finalizers_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/finalizers"
	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, testkit.Options{}, func(c *testkit.Cluster) { cluster = c })
}

const ours = "kopgo.dev/cleanup"

// countingClient is a client whose HTTP requests are counted.
func countingClient(t *testing.T) (client.Client, *atomic.Int64) {
	t.Helper()
	cfg, traffic := cluster.CountedConfig()
	c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	// The first use discovers the API; count only what comes after.
	_ = c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "warm-up"}, &corev1.ConfigMap{})
	traffic.Reset()
	return c, &traffic.Requests
}

func newConfigMap(t *testing.T, fins ...string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace(t), Name: "cm", Finalizers: fins}}
	if err := cluster.Client().Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Let the namespace go: drop every finalizer left.
		_ = cluster.Client().Patch(context.Background(), cm, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
	})
	return cm
}

func serverFinalizers(t *testing.T, cm *corev1.ConfigMap) []string {
	t.Helper()
	var got corev1.ConfigMap
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(cm), &got); err != nil {
		t.Fatal(err)
	}
	return got.Finalizers
}

func TestAddAndRemoveRequestCounts(t *testing.T) {
	c, requests := countingClient(t)
	cm := newConfigMap(t, "other.io/theirs")
	steps := []struct {
		name         string
		do           func() (bool, error)
		wantChanged  bool
		wantRequests int64
		wantServer   []string
	}{
		{"add when absent", func() (bool, error) { return finalizers.Add(t.Context(), c, cm, ours) }, true, 1, []string{"other.io/theirs", ours}},
		{"add when present", func() (bool, error) { return finalizers.Add(t.Context(), c, cm, ours) }, false, 0, []string{"other.io/theirs", ours}},
		{"remove when present", func() (bool, error) { return finalizers.Remove(t.Context(), c, cm, ours) }, true, 1, []string{"other.io/theirs"}},
		{"remove when absent", func() (bool, error) { return finalizers.Remove(t.Context(), c, cm, ours) }, false, 0, []string{"other.io/theirs"}},
	}
	for _, s := range steps {
		before := requests.Load()
		changed, err := s.do()
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if changed != s.wantChanged {
			t.Errorf("%s: changed = %t, want %t", s.name, changed, s.wantChanged)
		}
		if got := requests.Load() - before; got != s.wantRequests {
			t.Errorf("%s: %d requests, want %d", s.name, got, s.wantRequests)
		}
		if diff := cmp.Diff(s.wantServer, serverFinalizers(t, cm)); diff != "" {
			t.Errorf("%s: server finalizers (-want +got):\n%s", s.name, diff)
		}
		if finalizers.Has(cm, ours) != slices.Contains(s.wantServer, ours) {
			t.Errorf("%s: the object in hand does not match the server", s.name)
		}
	}
}

// A stale object in hand costs one failed patch, one read and one patch, and
// never drops what the other writer added.
func TestStaleObjectRetries(t *testing.T) {
	c, requests := countingClient(t)
	cm := newConfigMap(t)
	other := cm.DeepCopy()
	other.Finalizers = append(other.Finalizers, "other.io/late")
	if err := cluster.Client().Update(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	before := requests.Load()
	if _, err := finalizers.Add(t.Context(), c, cm, ours); err != nil {
		t.Fatal(err)
	}
	if got := requests.Load() - before; got != 3 {
		t.Errorf("%d requests for a stale object, want 3 (patch, get, patch)", got)
	}
	if diff := cmp.Diff([]string{"other.io/late", ours}, serverFinalizers(t, cm)); diff != "" {
		t.Errorf("server finalizers (-want +got):\n%s", diff)
	}
}

// Hundreds of our adds and removes interleaved with another controller's
// read-modify-write updates of its own finalizers: nobody loses anything.
func TestConcurrentWritersKeepEachOthersFinalizers(t *testing.T) {
	const rounds = 200
	cm := newConfigMap(t)
	ctx := t.Context()
	var wg sync.WaitGroup
	wg.Go(func() { // the other controller, with plain Update and conflict retries
		for i := range rounds {
			name := fmt.Sprintf("other.io/f-%d", i%5)
			// A patient controller: under this much contention the default
			// five retries are not enough for a read-modify-write Update.
			backoff := wait.Backoff{Steps: 100, Duration: 2 * time.Millisecond, Factor: 1.1, Jitter: 1, Cap: 50 * time.Millisecond}
			err := retry.RetryOnConflict(backoff, func() error {
				var cur corev1.ConfigMap
				if err := cluster.Client().Get(ctx, client.ObjectKeyFromObject(cm), &cur); err != nil {
					return err
				}
				if i := slices.Index(cur.Finalizers, name); i >= 0 {
					cur.Finalizers = slices.Delete(cur.Finalizers, i, i+1)
				} else {
					cur.Finalizers = append(cur.Finalizers, name)
				}
				return cluster.Client().Update(ctx, &cur)
			})
			if err != nil {
				t.Errorf("other writer: %v", err)
				return
			}
		}
	})
	mine := cm.DeepCopy()
	for i := range rounds {
		var err error
		if i%2 == 0 {
			_, err = finalizers.Add(ctx, cluster.Client(), mine, ours)
		} else {
			_, err = finalizers.Remove(ctx, cluster.Client(), mine, ours)
		}
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
	}
	wg.Wait()
	// The other writer toggled each of its 5 finalizers 40 times: all absent.
	// Our 200 rounds end with a Remove, so ours is absent too. Add ours once
	// more and one of theirs, so the final state holds both writers' entries.
	if _, err := finalizers.Add(ctx, cluster.Client(), mine, ours); err != nil {
		t.Fatal(err)
	}
	var cur corev1.ConfigMap
	if err := cluster.Client().Get(ctx, client.ObjectKeyFromObject(cm), &cur); err != nil {
		t.Fatal(err)
	}
	cur.Finalizers = append(cur.Finalizers, "other.io/keep")
	if err := cluster.Client().Update(ctx, &cur); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{ours, "other.io/keep"}, serverFinalizers(t, cm)); diff != "" {
		t.Errorf("final finalizers (-want +got):\n%s", diff)
	}
}

func TestRemoveOnGoneAndDeletingObjects(t *testing.T) {
	c := cluster.Client()
	cm := newConfigMap(t, ours)
	if err := c.Delete(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatal(err)
	}
	if cm.DeletionTimestamp == nil {
		t.Fatal("object with a finalizer was not marked for deletion")
	}
	// Ours is the last finalizer: removing it lets the object go.
	if changed, err := finalizers.Remove(t.Context(), c, cm, ours); err != nil || !changed {
		t.Fatalf("Remove on a deleting object = %t, %v", changed, err)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); !koperrors.IsNotFound(err) {
		t.Fatalf("object still there after its last finalizer went: %v", err)
	}
	// The object is gone; a stale copy still lists ours: Remove is a success.
	cm.Finalizers = []string{ours}
	if changed, err := finalizers.Remove(t.Context(), c, cm, ours); err != nil || changed {
		t.Errorf("Remove on a gone object = %t, %v, want false, nil", changed, err)
	}
}

func TestInvalidNamesSendNothing(t *testing.T) {
	c, requests := countingClient(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "cm"}}
	for _, name := range []string{"cleanup", "", "Example.com/a b"} {
		_, addErr := finalizers.Add(t.Context(), c, cm, name)
		_, removeErr := finalizers.Remove(t.Context(), c, cm, name)
		for _, err := range []error{addErr, removeErr} {
			if !koperrors.IsInvalid(err) {
				t.Errorf("finalizer %q: error %v, want Invalid", name, err)
			}
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests sent for invalid names, want 0", n)
	}
}

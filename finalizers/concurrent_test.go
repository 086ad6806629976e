package finalizers_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/finalizers"
)

// model is one writer's idea of its own finalizers (those with its
// prefix). Only that writer changes them, so the server must always list
// exactly these, once each: anything else means someone lost or
// duplicated another writer's entry.
type model struct {
	prefix string
	want   map[string]bool
}

func newModel(prefix string) *model { return &model{prefix: prefix, want: map[string]bool{}} }

func (m *model) check(fins []string) error {
	var got, want []string
	for _, f := range fins {
		if strings.HasPrefix(f, m.prefix) {
			got = append(got, f)
		}
	}
	for f, ok := range m.want {
		if ok {
			want = append(want, f)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		return fmt.Errorf("%s* finalizers (-want +got):\n%s", m.prefix, diff)
	}
	return nil
}

// cachedClient is a client that reads from an informer cache of ns, as a
// manager's client does, with its requests counted.
func cachedClient(t *testing.T, ns string) (client.Client, func() int64) {
	t.Helper()
	cfg, traffic := cluster.CountedConfig()
	informers, err := cache.New(cfg, cache.Options{Scheme: cluster.Scheme(), DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = informers.Start(t.Context()) }()
	c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme(), Cache: &client.CacheOptions{Reader: informers}})
	if err != nil {
		t.Fatal(err)
	}
	// Start the ConfigMap informer and wait for it, let the writing side
	// discover the API, then count from zero.
	warmUp := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "warm-up"}}
	_ = c.Get(t.Context(), client.ObjectKeyFromObject(warmUp), warmUp)
	_ = c.Delete(t.Context(), warmUp)
	if !informers.WaitForCacheSync(t.Context()) {
		t.Fatal("cache did not sync")
	}
	traffic.Reset()
	return c, traffic.Requests.Load
}

// Four writers on one object, hundreds of rounds each, all at once:
//   - ours toggles kopgo.dev/cleanup with Add and Remove (uncached client);
//   - another controller toggles four other.io/b-* finalizers with
//     read-modify-write Updates (resourceVersion-checked, retried);
//   - a third toggles three other.io/c-* finalizers with this package
//     through a cached client;
//   - a fourth keeps changing a label while ours runs, which must not
//     cost us anything.
//
// Each writer checks its own finalizers on every object it sees; at the
// end the server lists exactly what each writer last wanted.
func TestConcurrentWritersNeverLoseFinalizers(t *testing.T) {
	const rounds = 301 // odd: ours and c-0 end present; the b-* all four
	cm := newConfigMap(t, "")
	ctx, key := t.Context(), client.ObjectKeyFromObject(cm)
	ourClient, ourRequests := countingClient(t)
	cached, _ := cachedClient(t, cm.Namespace)

	a, b, c := newModel("kopgo.dev/"), newModel("other.io/b-"), newModel("other.io/c-")
	var ourChanges, cChanges, noise int
	stop, done := make(chan struct{}), make(chan struct{})
	start := time.Now()

	var wg sync.WaitGroup
	wg.Go(func() { // ours
		defer close(stop) // the label writer is there to disturb us
		mine := cm.DeepCopy()
		for i := range rounds {
			var changed bool
			var err error
			if a.want[ours] {
				changed, err = finalizers.Remove(ctx, ourClient, mine, ours)
			} else {
				changed, err = finalizers.Add(ctx, ourClient, mine, ours)
			}
			if err != nil {
				t.Errorf("ours, round %d: %v", i, err)
				return
			}
			a.want[ours] = !a.want[ours]
			if changed {
				ourChanges++
			}
			if err := a.check(mine.Finalizers); err != nil {
				t.Errorf("ours, round %d, the object in hand: %v", i, err)
				return
			}
		}
	})
	wg.Go(func() { // read-modify-write Update, as controllerutil users do
		patient := wait.Backoff{Steps: 1000, Duration: 2 * time.Millisecond, Factor: 1, Jitter: 2} // no Cap: reaching it ends the retries
		for i := range rounds - 1 {
			name := fmt.Sprintf("other.io/b-%d", i%4)
			err := retry.RetryOnConflict(patient, func() error {
				var cur corev1.ConfigMap
				if err := cluster.Client().Get(ctx, key, &cur); err != nil {
					return err
				}
				if err := b.check(cur.Finalizers); err != nil {
					return fmt.Errorf("read: %w", err) // not a conflict: stops the writer
				}
				if b.want[name] {
					cur.Finalizers = slices.DeleteFunc(cur.Finalizers, func(f string) bool { return f == name })
				} else {
					cur.Finalizers = append(cur.Finalizers, name)
				}
				return cluster.Client().Update(ctx, &cur)
			})
			if err != nil {
				t.Errorf("writer b, round %d: %v", i, err)
				return
			}
			b.want[name] = !b.want[name]
		}
	})
	wg.Go(func() { // this package again, through a cache
		w := cm.DeepCopy()
		for i := range rounds {
			name := fmt.Sprintf("other.io/c-%d", i%3)
			var changed bool
			var err error
			if c.want[name] {
				changed, err = finalizers.Remove(ctx, cached, w, name)
			} else {
				changed, err = finalizers.Add(ctx, cached, w, name)
			}
			if err != nil {
				t.Errorf("writer c, round %d: %v", i, err)
				return
			}
			c.want[name] = !c.want[name]
			if changed {
				cChanges++
			}
			if err := c.check(w.Finalizers); err != nil {
				t.Errorf("writer c, round %d, the object in hand: %v", i, err)
				return
			}
		}
	})
	go func() { // noise: labels only
		defer close(done)
		for ; ; noise++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			patch := fmt.Sprintf(`{"metadata":{"labels":{"noise":"%d"}}}`, noise)
			if err := cluster.Client().Patch(ctx, cm.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
				t.Errorf("noise: %v", err)
				return
			}
		}
	}()
	wg.Wait()
	<-done

	final := serverFinalizers(t, cm)
	for _, m := range []*model{a, b, c} {
		if err := m.check(final); err != nil {
			t.Errorf("final state: %v", err)
		}
	}
	if want := []string{ours, "other.io/b-0", "other.io/b-1", "other.io/b-2", "other.io/b-3", "other.io/c-0"}; !cmp.Equal(want, sorted(final)) {
		t.Errorf("final finalizers %v, want (sorted) %v", final, want)
	}
	if ourChanges != rounds {
		t.Errorf("ours changed the object %d times in %d rounds", ourChanges, rounds)
	}
	patches := ourRequests.Load()
	t.Logf("%s: ours: %d changes in %d requests (%.2f per change; a lost race costs 2 more); "+
		"writer c (cached): %d changes; label writes meanwhile: %d", time.Since(start).Round(time.Millisecond),
		ourChanges, patches, float64(patches)/float64(ourChanges), cChanges, noise)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

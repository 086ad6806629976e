package external_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopcontroller "github.com/kopgo/kopgo/controller"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

var (
	cluster *testkit.Cluster
	scheme  = widget.Scheme()
)

func TestMain(m *testing.M) {
	testkit.Main(m, testkit.Options{Scheme: scheme, CRDs: []*apiextensionsv1.CustomResourceDefinition{widget.CRD()}},
		func(c *testkit.Cluster) { cluster = c })
}

// system is an external system kept in memory: resources by ID, each
// tagged with the key it was created with, and every call counted. Its
// hooks inject what a real provider does to an operator.
type system struct {
	mu    sync.Mutex
	next  int
	res   map[string]*resource
	calls map[string]int // by operation
	// observed counts Observe calls by ID.
	observed map[string]int
	// createFails, when set, is called before a create is stored; its
	// error is returned instead (nothing stored).
	createFails func(key string) error
	// afterCreate, when set, is called after a create is stored and
	// before its answer; its error is returned instead of the ID (the
	// resource exists: a timeout after the provider acted).
	afterCreate func(key, id string) error
	// deleteLag is how many Observe calls still see a deleted resource.
	deleteLag int
	// deleteFor, when set, is how long a deleted resource is still seen,
	// as being deleted (a system that deletes asynchronously: 202, then
	// "deleting", then 404).
	deleteFor time.Duration
	// before, when set, is called (outside the lock) as each call comes
	// in, with the operation and the calling object's UID; its error is
	// returned instead of the call's answer.
	before func(op, uid string) error
	// log is every call as it came in.
	log []call
	// goneAt is when each resource deleted with deleteFor started to be
	// answered 404, by key.
	goneAt map[string]time.Time
}

// call is one call to the system.
type call struct {
	op, uid string
	at      time.Time
}

// enter logs a call of op by w and runs the before hook.
func (s *system) enter(op string, w *widget.Widget) error {
	s.mu.Lock()
	s.log = append(s.log, call{op: op, uid: string(w.UID), at: time.Now()})
	before := s.before
	s.mu.Unlock()
	if before != nil {
		return before(op, string(w.UID))
	}
	return nil
}

// calls returns the calls logged so far.
func (s *system) callLog() []call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// callsBy counts the calls of op by the object with uid ("": any).
func (s *system) callsBy(op, uid string) int {
	n := 0
	for _, c := range s.callLog() {
		if c.op == op && (uid == "" || c.uid == uid) {
			n++
		}
	}
	return n
}

type resource struct {
	key       string
	size      int64
	deleted   bool
	lagLeft   int
	deletedAt time.Time
	creation  int // order of creation, for reports
}

func newSystem() *system {
	return &system{res: map[string]*resource{}, calls: map[string]int{}, observed: map[string]int{}, goneAt: map[string]time.Time{}}
}

func (s *system) count(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

// live returns the keys of the resources that exist, one entry per
// resource (a key twice is a duplicate).
func (s *system) live() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	for _, r := range s.res {
		if !r.deleted {
			keys = append(keys, r.key)
		}
	}
	sort.Strings(keys)
	return keys
}

// observes returns how many times each of ids was observed.
func (s *system) observes(ids []string) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = s.observed[id]
	}
	return out
}

// has reports whether the system still holds a resource with key, even
// one whose deletion it has not finished.
func (s *system) has(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.res {
		if r.key == key {
			return true
		}
	}
	return false
}

// drift changes (or, with gone, deletes) the resource with id behind the
// operator's back.
func (s *system) drift(id string, gone bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gone {
		delete(s.res, id)
		return
	}
	s.res[id].size += 1000
}

func (s *system) sizeOf(id string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.res[id]
	if !ok || r.deleted {
		return 0, false
	}
	return r.size, true
}

// finder is a Client for Widgets (their spec.size is the resource's) with
// Find.
type finder struct{ s *system }

func (c finder) Observe(_ context.Context, w *widget.Widget, id string) (external.Observation, error) {
	if err := c.s.enter("observe", w); err != nil {
		return external.Observation{}, err
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.calls["observe"]++
	c.s.observed[id]++
	r, ok := c.s.res[id]
	if !ok {
		return external.Observation{}, nil
	}
	if r.deleted && c.s.deleteFor > 0 {
		if time.Since(r.deletedAt) >= c.s.deleteFor {
			delete(c.s.res, id)
			c.s.goneAt[r.key] = r.deletedAt.Add(c.s.deleteFor)
			return external.Observation{}, nil
		}
		return external.Observation{Exists: true, UpToDate: true, Deleting: true, Key: r.key}, nil
	}
	if r.deleted {
		if r.lagLeft == 0 {
			delete(c.s.res, id)
			return external.Observation{}, nil
		}
		r.lagLeft--
		return external.Observation{Exists: true, UpToDate: true, Key: r.key}, nil
	}
	return external.Observation{Exists: true, UpToDate: r.size == w.Spec.Size, Key: r.key}, nil
}

func (c finder) Create(_ context.Context, w *widget.Widget, key string) (string, error) {
	if err := c.s.enter("create", w); err != nil {
		return "", err
	}
	c.s.mu.Lock()
	c.s.calls["create"]++
	if c.s.createFails != nil {
		if err := c.s.createFails(key); err != nil {
			c.s.mu.Unlock()
			return "", err
		}
	}
	c.s.next++
	id := fmt.Sprintf("r-%d", c.s.next)
	c.s.res[id] = &resource{key: key, size: w.Spec.Size, creation: c.s.next}
	after := c.s.afterCreate
	c.s.mu.Unlock()
	if after != nil {
		if err := after(key, id); err != nil {
			return "", err
		}
	}
	return id, nil
}

func (c finder) Update(_ context.Context, w *widget.Widget, id string) error {
	if err := c.s.enter("update", w); err != nil {
		return err
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.calls["update"]++
	r, ok := c.s.res[id]
	if !ok || r.deleted {
		return koperrors.Errorf(koperrors.NotFound, "resource %s not found", id)
	}
	r.size = w.Spec.Size
	return nil
}

func (c finder) Delete(_ context.Context, w *widget.Widget, id string) error {
	if err := c.s.enter("delete", w); err != nil {
		return err
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.calls["delete"]++
	r, ok := c.s.res[id]
	switch {
	case !ok:
		return koperrors.Errorf(koperrors.NotFound, "resource %s not found", id)
	case r.deleted:
		return nil // accepted again, still under way
	case c.s.deleteLag == 0 && c.s.deleteFor == 0:
		delete(c.s.res, id)
		return nil
	}
	r.deleted, r.lagLeft, r.deletedAt = true, c.s.deleteLag, time.Now()
	return nil
}

func (c finder) Find(_ context.Context, w *widget.Widget, key string) (string, error) {
	if err := c.s.enter("find", w); err != nil {
		return "", err
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.calls["find"]++
	for id, r := range c.s.res {
		if r.key == key && !r.deleted {
			return id, nil
		}
	}
	return "", nil
}

// noFinder is the same client without Find.
type noFinder struct{ c finder }

func (n noFinder) Observe(ctx context.Context, w *widget.Widget, id string) (external.Observation, error) {
	return n.c.Observe(ctx, w, id)
}

func (n noFinder) Create(ctx context.Context, w *widget.Widget, key string) (string, error) {
	return n.c.Create(ctx, w, key)
}

func (n noFinder) Update(ctx context.Context, w *widget.Widget, id string) error {
	return n.c.Update(ctx, w, id)
}

func (n noFinder) Delete(ctx context.Context, w *widget.Widget, id string) error {
	return n.c.Delete(ctx, w, id)
}

// connectTo returns a connect function for client c.
func connectTo(c external.Client[*widget.Widget]) func(context.Context, *widget.Widget, *reconciler.Env) (external.Client[*widget.Widget], error) {
	return func(context.Context, *widget.Widget, *reconciler.Env) (external.Client[*widget.Widget], error) {
		return c, nil
	}
}

// start runs an external Reconciler for the Widgets of namespace ns
// (selected by label) until the test ends, and returns a function that
// stops it earlier and waits for Run to return.
func start(t *testing.T, name, ns string, r *external.Reconciler[*widget.Widget], rec observability.Recorder) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- kopcontroller.New[*widget.Widget](name, r).Config(cluster.Config).Scheme(scheme).
			Recorder(rec).LabelSelector("ext=" + ns).Concurrency(8).Run(ctx)
	}()
	var once sync.Once
	stop = func() {
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
	}
	t.Cleanup(stop)
	return stop
}

// newWidgets creates n Widgets of size 1 in ns.
func newWidgets(t *testing.T, ns string, n int, annotations map[string]string) []*widget.Widget {
	t.Helper()
	ws := make([]*widget.Widget, n)
	for i := range ws {
		ws[i] = &widget.Widget{ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: fmt.Sprintf("w%03d", i), Labels: map[string]string{"ext": ns}, Annotations: annotations,
		}, Spec: widget.WidgetSpec{Size: 1}}
		if err := cluster.Client().Create(t.Context(), ws[i]); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func get(t *testing.T, w *widget.Widget) *widget.Widget {
	t.Helper()
	got := &widget.Widget{}
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(w), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// eventually polls cond every 50 ms until it returns nil or timeout ends.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %s: %v", what, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// allReady waits until every Widget is Ready for its generation with a
// recorded resource, and returns their IDs.
func allReady(t *testing.T, ws []*widget.Widget, timeout time.Duration) []string {
	t.Helper()
	ids := make([]string, len(ws))
	eventually(t, timeout, "every Widget Ready with its resource recorded", func() error {
		for i, w := range ws {
			got := get(t, w)
			ids[i] = got.Annotations[external.NameAnnotation]
			if ids[i] == "" || !status.IsTrue(got, status.Ready) || !status.IsCurrent(got) {
				return fmt.Errorf("%s: id %q, conditions %v", got.Name, ids[i], got.Status.Conditions)
			}
		}
		return nil
	})
	return ids
}

func keysOf(ws []*widget.Widget) []string {
	keys := make([]string, 0, len(ws))
	for _, w := range ws {
		keys = append(keys, string(w.UID))
	}
	slices.Sort(keys)
	return keys
}

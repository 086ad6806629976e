package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kopgo/kopgo/examples/database"
	"github.com/kopgo/kopgo/examples/database/api/v1alpha1"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit"
)

// registryNamespace holds the operator's registry ConfigMap.
const registryNamespace = "database-system"

var (
	cluster *testkit.Cluster
	// traffic counts the operator's requests (Bytes stays 0): the suite's tests run one
	// after another, and each waits for its Databases to be gone before
	// it ends, so what it counts between two points of a test is that
	// test's.
	traffic *testkit.Traffic
	// writes counts the same requests' writes by verb and resource.
	writes = &writeLog{counts: map[string]int{}}
)

// TestMain starts a full cluster (controller manager, scheduler, kwok
// nodes, volume provisioner) with the Database CRD, and the operator for
// the whole suite, as `go run ./examples/database/cmd/database` runs it,
// as a user bound only to the generated RBAC, its requests counted and
// their permissions recorded. The operator stops before the cluster does.
func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	opts := testkit.Options{Full: true, CRDPaths: []string{"../config/crd"}, Scheme: database.Scheme()}
	testkit.Main(m, opts, func(c *testkit.Cluster) {
		cluster = c
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: registryNamespace}}
		if err := c.Client().Create(context.Background(), ns); err != nil {
			panic(err) // Main stops the cluster
		}
		if err := installRBAC(context.Background(), c.Client(), operatorUser); err != nil {
			panic(err)
		}
		cfg, err := c.UserConfig(operatorUser)
		if err != nil {
			panic(err)
		}
		cfg, perms = testkit.RecordPermissions(cfg)
		traffic = &testkit.Traffic{}
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return writes.wrap(count(traffic, rt)) })
		op := database.New(database.Options{Config: cfg, Namespace: registryNamespace, HealthPort: -1, MetricsPort: -1})
		c.Go(op.Run)
	})
}

// newDatabase creates a Database named name in ns, after mutate changed
// it, and deletes it when the test ends, waiting until it is gone: its
// Cleanup runs within the test that made it.
func newDatabase(t *testing.T, ns, name, version string, mutate func(*v1alpha1.Database)) *v1alpha1.Database {
	t.Helper()
	db := &v1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.DatabaseSpec{Version: version},
	}
	if mutate != nil {
		mutate(db)
	}
	c := cluster.Client()
	if err := c.Create(t.Context(), db); err != nil {
		t.Fatalf("create Database %s/%s: %v", ns, name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Delete(ctx, db); client.IgnoreNotFound(err) != nil {
			t.Errorf("delete Database %s/%s: %v", ns, name, err)
			return
		}
		if err := waitGone(ctx, db); err != nil {
			t.Errorf("Database %s/%s not gone: %v", ns, name, err)
		}
		checkPermissions(t)
	})
	return db
}

// waitGone waits until obj is deleted.
func waitGone(ctx context.Context, obj client.Object) error {
	for {
		err := cluster.Client().Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("%w (last read: %w)", ctx.Err(), err)
			}
			return fmt.Errorf("%w (still there, finalizers %v)", ctx.Err(), obj.GetFinalizers())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// eventually polls cond until it returns nil, failing t with cond's last
// error once timeout has passed.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	testkit.Eventually(t, timeout, what, cond)
}

// readyTimeout bounds the wait for a Database to become Ready: a
// StatefulSet rolling out pod by pod, with a volume provisioned for each,
// and a Job, on two shared cores.
const readyTimeout = 2 * time.Minute

// waitReady waits until db is Ready=True for its current generation, with
// the operator's reason (not the loop's bare "Succeeded", which the first
// status write of a new Database shows: see
// TestNewDatabaseIsNotReadyBeforeItsChildren), and returns it as read
// then.
func waitReady(t *testing.T, db *v1alpha1.Database) *v1alpha1.Database {
	t.Helper()
	got := &v1alpha1.Database{}
	eventually(t, readyTimeout, "Database "+db.Name+" Ready", func(ctx context.Context) error {
		if err := cluster.Client().Get(ctx, client.ObjectKeyFromObject(db), got); err != nil {
			return err
		}
		r := status.Get(got, status.Ready)
		if r == nil || r.Status != metav1.ConditionTrue || r.Reason != database.ReasonAvailable || got.Status.ObservedGeneration != got.Generation {
			return fmt.Errorf("generation %d, observed %d, conditions %s", got.Generation, got.Status.ObservedGeneration, conditions(got))
		}
		return nil
	})
	return got
}

// update changes the Database as mutate says, retrying on conflicts.
func update(t *testing.T, db *v1alpha1.Database, mutate func(*v1alpha1.Database)) {
	t.Helper()
	eventually(t, 30*time.Second, "update Database "+db.Name, func(ctx context.Context) error {
		if err := cluster.Client().Get(ctx, client.ObjectKeyFromObject(db), db); err != nil {
			return err
		}
		mutate(db)
		return cluster.Client().Update(ctx, db)
	})
}

// conditions renders a Database's conditions for a failure message.
func conditions(db *v1alpha1.Database) string {
	var parts []string
	for _, c := range db.Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s/%s: %q", c.Type, c.Status, c.Reason, c.Message))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// event is one events.k8s.io Event about a Database, with the number of
// times it happened (1, or its series' count).
type event struct {
	reason, note string
	count        int32
}

// eventsOf lists the events.k8s.io Events about the Database ns/name.
func eventsOf(ctx context.Context, ns, name string) ([]event, error) {
	var list eventsv1.EventList
	if err := cluster.Client().List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var out []event
	for _, e := range list.Items {
		if e.Regarding.Kind != "Database" || e.Regarding.Name != name {
			continue
		}
		n := int32(1)
		if e.Series != nil {
			n = e.Series.Count
		}
		out = append(out, event{reason: e.Reason, note: e.Note, count: n})
	}
	return out, nil
}

// changes counts, in the Synced events, how often each "<verb> <Kind>"
// was recorded ("created StatefulSet": 1), each child named counting once
// per occurrence of its event.
func changes(events []event) map[string]int {
	out := map[string]int{}
	for _, e := range events {
		if e.reason != "Synced" {
			continue
		}
		for part := range strings.SplitSeq(e.note, "; ") {
			verb, children, ok := cutVerb(part)
			if !ok {
				out["unparsed: "+part] += int(e.count)
				continue
			}
			for child := range strings.SplitSeq(children, ", ") {
				kind, _, _ := strings.Cut(child, " ")
				out[verb+" "+kind] += int(e.count)
			}
		}
	}
	return out
}

// cutVerb splits "created Secret ns/a, Service ns/b" into its verb and
// its children.
func cutVerb(part string) (verb, children string, ok bool) {
	for _, v := range []string{"deleted to recreate", "created", "adopted", "updated", "deleted"} {
		if rest, found := strings.CutPrefix(part, v+" "); found {
			return v, rest, true
		}
	}
	return "", "", false
}

// Children of a Database, read with the admin client.

func statefulSetOf(ctx context.Context, db *v1alpha1.Database) (*appsv1.StatefulSet, error) {
	var s appsv1.StatefulSet
	return &s, cluster.Client().Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.Name}, &s)
}

func jobOf(ctx context.Context, db *v1alpha1.Database) (*batchv1.Job, error) {
	var j batchv1.Job
	return &j, cluster.Client().Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: database.JobName(db)}, &j)
}

func secretOf(ctx context.Context, db *v1alpha1.Database) (*corev1.Secret, error) {
	var s corev1.Secret
	return &s, cluster.Client().Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: database.SecretName(db)}, &s)
}

// registryEntry returns db's entry in the registry, and whether there is one.
func registryEntry(ctx context.Context, db *v1alpha1.Database) (string, bool, error) {
	var cm corev1.ConfigMap
	err := cluster.Client().Get(ctx, client.ObjectKey{Namespace: registryNamespace, Name: database.RegistryName}, &cm)
	if apierrors.IsNotFound(err) {
		return "", false, nil
	}
	v, ok := cm.Data[database.RegistryKey(db)]
	return v, ok, err
}

// history watches the Database ns/name and records each distinct
// "Ready=<status>/<reason>: <message>" (with Reconciling's, when set) it
// goes through, in order, until the test ends.
func history(t *testing.T, ns, name string) func() []string {
	t.Helper()
	wc, err := client.NewWithWatch(cluster.Config, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := wc.Watch(ctx, &v1alpha1.DatabaseList{}, client.InNamespace(ns))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			db, ok := ev.Object.(*v1alpha1.Database)
			if !ok || db.Name != name {
				continue
			}
			var s string
			if r := status.Get(db, status.Ready); r != nil {
				s = fmt.Sprintf("Ready=%s/%s: %s", r.Status, r.Reason, r.Message)
			}
			if r := status.Get(db, status.Reconciling); r != nil {
				s += fmt.Sprintf(" (Reconciling=%s/%s)", r.Status, r.Reason)
			}
			mu.Lock()
			if s != "" && (len(seen) == 0 || seen[len(seen)-1] != s) {
				seen = append(seen, s)
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); cancel(); <-done })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// writeLog counts write requests by verb and resource: "PATCH
// statefulsets", "PATCH databases/status", "POST events".
type writeLog struct {
	mu     sync.Mutex
	counts map[string]int
}

func (l *writeLog) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if testkit.IsWrite(r) {
			l.mu.Lock()
			l.counts[r.Method+" "+resourceOf(r.URL.Path)]++
			l.mu.Unlock()
		}
		return next.RoundTrip(r)
	})
}

// since returns the counts accumulated after before (an earlier snapshot).
func (l *writeLog) since(before map[string]int) map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for k, n := range l.counts {
		if d := n - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

func (l *writeLog) snapshot() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.counts)
}

// count counts the requests through next in t, as
// testkit.Cluster.CountedConfig does for the admin's config.
func count(t *testkit.Traffic, next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		t.Requests.Add(1)
		if testkit.IsWrite(r) {
			t.Writes.Add(1)
		}
		return next.RoundTrip(r)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// resourceOf returns the resource of an API path, with its subresource:
// /apis/apps/v1/namespaces/ns/statefulsets/web -> "statefulsets",
// .../databases/orders/status -> "databases/status".
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	// /api/v1/... or /apis/group/version/...
	rest := parts
	switch {
	case len(parts) > 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) > 3 && parts[0] == "apis":
		rest = parts[3:]
	}
	if len(rest) > 2 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	switch len(rest) {
	case 0:
		return path
	case 3:
		return rest[0] + "/" + rest[2]
	}
	return rest[0]
}

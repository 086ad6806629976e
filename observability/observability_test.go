package observability_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, testkit.Options{}, func(c *testkit.Cluster) {
		cluster = c
		// The Examples find the cluster as a program would.
		if err := os.Setenv("KUBECONFIG", c.Kubeconfig); err != nil {
			panic(err)
		}
	})
}

// newManager returns a manager that is not started: enough for the
// recorder, which writes through its client.
func newManager(t *testing.T) manager.Manager {
	t.Helper()
	mgr, err := manager.New(cluster.Config, manager.Options{
		Scheme: cluster.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// newRecorder returns a recorder through an unstarted manager, shut down
// when the test ends.
func newRecorder(t *testing.T) *observability.EventRecorder {
	t.Helper()
	r, err := observability.NewRecorder(newManager(t), "kopgo-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Shutdown(context.Background()) })
	return r
}

// createConfigMap creates a ConfigMap named name in ns.
func createConfigMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := cluster.Client().Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

// events lists the events in ns.
func events(t *testing.T, ns string) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	if err := cluster.Client().List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// count is an Event's series count, 1 without a series.
func count(e eventsv1.Event) int32 {
	if e.Series == nil {
		return 1
	}
	return e.Series.Count
}

// counts lists the series counts of the events in ns.
func counts(t *testing.T, ns string) []int32 {
	t.Helper()
	var n []int32
	for _, e := range events(t, ns) {
		n = append(n, count(e))
	}
	return n
}

// eventually polls cond every 100ms for up to 20s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Repeated events fold into one Event object on the server.
func TestEventsAreRecordedAndDeduplicated(t *testing.T) {
	ns := cluster.Namespace(t)
	cm := createConfigMap(t, ns, "cm")
	r := newRecorder(t)
	for range 5 {
		r.Normal(cm, nil, "Deployed", "Apply", "children applied")
	}
	r.Warning(cm, nil, "InvalidSpec", "Validate", "spec.port 70000: must be at most 65535")

	eventually(t, "two events", func() bool { return len(events(t, ns)) >= 2 })
	r.Shutdown(t.Context())
	got := map[string]int32{}
	for _, e := range events(t, ns) {
		got[e.Type+"/"+e.Reason] += count(e)
		if e.Regarding.Name != "cm" || e.ReportingController != "kopgo-test" || !strings.HasPrefix(e.Name, "cm.") {
			t.Errorf("event %s regarding %s by %s", e.Name, e.Regarding.Name, e.ReportingController)
		}
	}
	if diff := cmp.Diff(map[string]int32{"Normal/Deployed": 5, "Warning/InvalidSpec": 1}, got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if n := len(events(t, ns)); n != 2 {
		t.Errorf("%d events, want 2 (5 identical ones folded into one)", n)
	}
}

// A burst of identical events shows its whole count on the server once the
// recorder shuts down: client-go's broadcaster left it at 1 or 2.
func TestBurstCountIsTrueAtShutdown(t *testing.T) {
	ns := cluster.Namespace(t)
	cm := createConfigMap(t, ns, "cm")
	r := newRecorder(t)
	for range 10 {
		r.Normal(cm, nil, "Deployed", "Apply", "children applied")
	}
	r.Shutdown(t.Context())
	r.Normal(cm, nil, "Deployed", "Apply", "after shutdown: dropped")

	if got := counts(t, ns); !slices.Equal(got, []int32{10}) {
		t.Fatalf("event counts %v, want [10]", got)
	}
}

// When the manager stops, the pending counts are written, and a repeat
// recorded afterwards (by a reconcile still draining) is written at once.
func TestCountIsWrittenWhenTheManagerStops(t *testing.T) {
	ns := cluster.Namespace(t)
	cm := createConfigMap(t, ns, "cm")
	mgr := newManager(t)
	r, err := observability.NewRecorder(mgr, "kopgo-test")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown(context.Background())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	for range 10 {
		r.Warning(cm, nil, "Failing", "Reconcile", "backend down")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := counts(t, ns); !slices.Equal(got, []int32{10}) {
		t.Fatalf("event counts %v, want [10]", got)
	}
	for range 3 {
		r.Warning(cm, nil, "Failing", "Reconcile", "backend down")
	}
	eventually(t, "count 13", func() bool { return slices.Equal(counts(t, ns), []int32{13}) })
}

// A recorder whose manager stopped and whose caller never calls Shutdown
// (a controller added with Builder.Setup) still writes what draining
// reconciles record, then keeps nothing running: its worker ends as soon
// as nothing is left to write, and the recorder, with the stopped
// manager's cache its client reads, can be collected once dropped.
func TestRecorderStopsAfterItsManager(t *testing.T) {
	ns := cluster.Namespace(t)
	cm := createConfigMap(t, ns, "cm")
	mgr := newManager(t)
	r, err := observability.NewRecorder(mgr, "kopgo-test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	r.Normal(cm, nil, "Deployed", "Apply", "before the stop")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.Normal(cm, nil, "Drained", "Reconcile", "after the stop")
	eventually(t, "both events written", func() bool { return len(events(t, ns)) == 2 })
	for deadline := time.Now().Add(5 * time.Second); observability.WorkerRunning(r); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the recorder's worker still runs 5 s after its last event was written")
		}
	}
	gone := weak.Make(r)
	r, mgr = nil, nil // dropped, for the collector
	for deadline := time.Now().Add(5 * time.Second); gone.Value() != nil; time.Sleep(10 * time.Millisecond) {
		runtime.GC()
		if time.Now().After(deadline) {
			t.Fatal("the recorder of a stopped manager is still reachable 5 s after it was dropped")
		}
	}
}

// Events that differ only in their note are distinct events, not repeats:
// the names of two Jobs created by one parent both reach the server.
func TestEventsDifferingInNoteAreDistinct(t *testing.T) {
	ns := cluster.Namespace(t)
	parent := createConfigMap(t, ns, "parent")
	r := newRecorder(t)
	r.Normal(parent, nil, "JobCreated", "Create", "Job migrate-1 created")
	r.Normal(parent, nil, "JobCreated", "Create", "Job migrate-2 created")
	r.Normal(parent, nil, "JobCreated", "Create", "Job migrate-2 created")
	r.Shutdown(t.Context())

	var got []string
	for _, e := range events(t, ns) {
		got = append(got, fmt.Sprintf("%s x%d", e.Note, count(e)))
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"Job migrate-1 created x1", "Job migrate-2 created x2"}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// A recorder made from a rest.Config, without a manager, writes its
// events under the reporting controller and instance it was given.
func TestRecorderForConfig(t *testing.T) {
	ns := cluster.Namespace(t)
	cm := createConfigMap(t, ns, "cm")
	r, err := observability.NewRecorderForConfig(cluster.Config, "example.com/backup",
		observability.WithReportingInstance("backup-28917"))
	if err != nil {
		t.Fatal(err)
	}
	r.Normal(cm, nil, "Saved", "Backup", "3 databases saved")
	r.Normal(cm, nil, "Saved", "Backup", "3 databases saved")
	r.Shutdown(t.Context())
	got := events(t, ns)
	if len(got) != 1 {
		t.Fatalf("%d events, want 1", len(got))
	}
	e := got[0]
	if e.ReportingController != "example.com/backup" || e.ReportingInstance != "backup-28917" || count(e) != 2 || e.Note != "3 databases saved" {
		t.Errorf("event reported by %s/%s, count %d, note %q", e.ReportingController, e.ReportingInstance, count(e), e.Note)
	}
	if observability.WorkerRunning(r) {
		t.Error("the worker runs after Shutdown")
	}
}

// The caller names the reporter: reportingController and
// reportingInstance are what it passes.
func TestReportingIdentity(t *testing.T) {
	ns := cluster.Namespace(t)
	cm := createConfigMap(t, ns, "cm")
	r, err := observability.NewRecorder(newManager(t), "webapp-controller", observability.WithReportingInstance("webapp-7d9f-x2"))
	if err != nil {
		t.Fatal(err)
	}
	r.Warning(cm, nil, "Invalid", "Validate", "spec.port 70000: must be at most 65535")
	r.Shutdown(t.Context())
	got := events(t, ns)
	if len(got) != 1 || got[0].ReportingController != "webapp-controller" || got[0].ReportingInstance != "webapp-7d9f-x2" {
		t.Fatalf("events %+v, want one by webapp-controller/webapp-7d9f-x2", got)
	}
}

// A reporter the API server would refuse every event of is an error when
// the recorder is made, not a log line per event.
func TestRecorderRefusesAnInvalidReporter(t *testing.T) {
	mgr := newManager(t)
	for _, tt := range []struct {
		controller string
		opts       []observability.RecorderOption
	}{
		{"", nil},
		{"Web App", nil},
		{"example.com/", nil},
		{"webapp", []observability.RecorderOption{observability.WithReportingInstance(strings.Repeat("x", 129))}},
	} {
		if _, err := observability.NewRecorder(mgr, tt.controller, tt.opts...); err == nil {
			t.Errorf("NewRecorder(%q, %d options): no error", tt.controller, len(tt.opts))
		}
		if _, err := observability.NewRecorderForConfig(cluster.Config, tt.controller, tt.opts...); err == nil {
			t.Errorf("NewRecorderForConfig(%q, %d options): no error", tt.controller, len(tt.opts))
		}
	}
}

// Without a shutdown, a repeating event's count reaches the server within
// the series interval.
func TestCountIsWrittenPeriodically(t *testing.T) {
	defer observability.SetSeriesInterval(200 * time.Millisecond)()
	ns := cluster.Namespace(t)
	cm := createConfigMap(t, ns, "cm")
	r := newRecorder(t)
	for range 10 {
		r.Normal(cm, nil, "Deployed", "Apply", "children applied")
	}
	eventually(t, "count 10", func() bool { return slices.Equal(counts(t, ns), []int32{10}) })
}

// Events naming different related objects stay apart under one reason.
func TestRelatedEventsDoNotFold(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	parent := createConfigMap(t, ns, "parent")
	a := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}}
	b := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b"}}
	for _, o := range []client.Object{a, b} {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	r := newRecorder(t)
	r.Normal(parent, a, "SecretCreated", "Apply", "Secret a created")
	r.Normal(parent, b, "SecretCreated", "Apply", "Secret b created")
	r.Shutdown(t.Context())

	var got []string
	for _, e := range events(t, ns) {
		if e.Related != nil {
			got = append(got, e.Related.Name+": "+e.Note)
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"a: Secret a created", "b: Secret b created"}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// An object with the longest name allowed still gets its events: the
// Event's name, "<object name>.<time>", is cut to fit.
func TestEventAboutALongNamedObject(t *testing.T) {
	ns := cluster.Namespace(t)
	cm := createConfigMap(t, ns, strings.Repeat("a", 253))
	r := newRecorder(t)
	r.Warning(cm, nil, "Invalid", "Validate", "name too long for a label")
	r.Shutdown(t.Context())
	got := events(t, ns)
	if len(got) != 1 || got[0].Regarding.Name != cm.Name {
		t.Fatalf("%d events, want 1 about the long-named ConfigMap", len(got))
	}
	if name := got[0].Name; len(name) > 253 || !strings.HasPrefix(name, "aaaa") {
		t.Errorf("event name %q", name)
	}
}

// A note longer than the API's 1 KiB limit is cut, not refused with the
// whole event.
func TestLongNoteIsCutNotLost(t *testing.T) {
	ns := cluster.Namespace(t)
	cm := createConfigMap(t, ns, "cm")
	r := newRecorder(t)
	r.Warning(cm, nil, "Invalid", "Validate", "spec.config: "+strings.Repeat("é", 2000))
	r.Shutdown(t.Context())
	got := events(t, ns)
	if len(got) != 1 {
		t.Fatalf("%d events recorded, want 1", len(got))
	}
	if note := got[0].Note; len(note) > 1024 || !strings.HasPrefix(note, "spec.config: é") || !strings.HasSuffix(note, "…") {
		t.Errorf("note of %d bytes: %.40q...", len(note), note)
	}
}

// Recording never blocks the caller, even while the API server does not
// answer: the calls return, and what was queued is written once it does.
func TestRecordingNeverBlocks(t *testing.T) {
	ns := cluster.Namespace(t)
	cm := createConfigMap(t, ns, "cm")
	unblock := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(unblock) }) }
	base, err := client.NewWithWatch(cluster.Config, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	stuck := interceptor.NewClient(base, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			select {
			case <-unblock:
			case <-ctx.Done():
				return ctx.Err()
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	mgr := &clientManager{Manager: newManager(t), c: stuck}
	r, err := observability.NewRecorder(mgr, "kopgo-test")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown(context.Background())
	defer release() // before Shutdown, which would wait for the stuck writes

	returned := make(chan struct{})
	go func() {
		defer close(returned)
		for i := range 1200 { // more distinct events than the queue holds
			r.Normal(cm, nil, "Step"+strconv.Itoa(i), "Apply", "step")
			r.Warning(cm, nil, "Repeated", "Apply", "same")
		}
	}()
	select {
	case <-returned:
	case <-time.After(time.Minute):
		t.Fatal("recording blocked while the API server did not answer")
	}
	release()
	r.Shutdown(t.Context())
	for _, e := range events(t, ns) {
		if e.Reason == "Repeated" && count(e) != 1200 {
			t.Errorf("Repeated: count %d, want 1200", count(e))
		}
	}
}

// clientManager is a manager whose client is c.
type clientManager struct {
	manager.Manager
	c client.Client
}

func (m *clientManager) GetClient() client.Client { return m.c }

func TestFakeRecorder(t *testing.T) {
	var f observability.FakeRecorder
	var r observability.Recorder = &f
	child := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}
	r.Normal(nil, child, "A", "Do", "one")
	r.Warning(nil, nil, "B", "Do", "two")
	var got []string
	for _, e := range f.Events() {
		related := "-"
		if e.Related != nil {
			related = e.Related.(*corev1.Secret).Name
		}
		got = append(got, e.Type+"/"+e.Reason+"/"+e.Note+"/"+related)
	}
	if diff := cmp.Diff([]string{"Normal/A/one/s", "Warning/B/two/-"}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

var _ observability.Recorder = (*observability.EventRecorder)(nil)

// An object the scheme does not know is logged and dropped, never a panic.
func TestUnknownObjectIsDropped(t *testing.T) {
	r := newRecorder(t)
	r.Normal(&unknown{}, nil, "X", "Y", "Z")
	r.Normal(nil, nil, "X", "Y", "Z")
}

type unknown struct{ corev1.ConfigMap }

func (u *unknown) DeepCopyObject() k8sruntime.Object { return u }

package observability_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, testkit.Options{}, func(c *testkit.Cluster) { cluster = c })
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := observability.NewMetrics(reg) // a second controller shares the series
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m.ObserveReconcile(ctx, "web", observability.ResultSuccess, nil, 10*time.Millisecond)
	again.ObserveReconcile(ctx, "web", observability.ResultSuccess, nil, 20*time.Millisecond)
	m.ObserveReconcile(ctx, "web", observability.ResultError, fmt.Errorf("x: %w", koperrors.Errorf(koperrors.Unavailable, "down")), time.Second)
	m.ObserveReconcile(ctx, "web", observability.ResultTerminal, koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "bad")), time.Millisecond)
	m.ObserveReconcile(ctx, "web", observability.ResultTimeout, context.DeadlineExceeded, 5*time.Second)
	m.ObserveReconcile(ctx, "web", observability.ResultConflict, errors.New("conflict"), time.Millisecond)
	m.RecordApply("web", "Created")
	m.RecordApply("web", "Unchanged")
	m.RecordApply("web", "Unchanged")
	m.RecordDeletions("web", 3)

	want := `
# HELP kopgo_apply_total Server-side applies by controller and outcome.
# TYPE kopgo_apply_total counter
kopgo_apply_total{controller="web",outcome="Created"} 1
kopgo_apply_total{controller="web",outcome="Unchanged"} 2
# HELP kopgo_gc_deletions_total Objects deleted by garbage collection.
# TYPE kopgo_gc_deletions_total counter
kopgo_gc_deletions_total{controller="web"} 3
# HELP kopgo_reconcile_errors_total Failed reconciles by controller and error kind.
# TYPE kopgo_reconcile_errors_total counter
kopgo_reconcile_errors_total{controller="web",kind="Invalid"} 1
kopgo_reconcile_errors_total{controller="web",kind="Timeout"} 1
kopgo_reconcile_errors_total{controller="web",kind="Unavailable"} 1
# HELP kopgo_reconcile_total Reconciles by controller and result.
# TYPE kopgo_reconcile_total counter
kopgo_reconcile_total{controller="web",result="conflict"} 1
kopgo_reconcile_total{controller="web",result="error"} 1
kopgo_reconcile_total{controller="web",result="success"} 2
kopgo_reconcile_total{controller="web",result="terminal"} 1
kopgo_reconcile_total{controller="web",result="timeout"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"kopgo_apply_total", "kopgo_gc_deletions_total", "kopgo_reconcile_errors_total", "kopgo_reconcile_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "kopgo_reconcile_duration_seconds"); n != 1 {
		t.Errorf("%d duration series, want 1", n)
	}
}

func TestTraceIDExemplar(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider()
	ctx, span := observability.StartReconcile(context.Background(), observability.Tracer(tp), "web", "ConfigMap",
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}})
	m.ObserveReconcile(ctx, "web", observability.ResultSuccess, nil, 30*time.Millisecond)
	span.End()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "kopgo_reconcile_duration_seconds" {
			continue
		}
		for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
			if ex := b.GetExemplar(); ex != nil {
				if got := ex.GetLabel()[0].GetValue(); got != span.SpanContext().TraceID().String() {
					t.Errorf("exemplar trace_id %s, want %s", got, span.SpanContext().TraceID())
				}
				return
			}
		}
	}
	t.Error("no exemplar on the duration histogram")
}

func TestSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", UID: "u1", Generation: 7}}
	ctx, span := observability.StartReconcile(context.Background(), observability.Tracer(tp), "web", "ConfigMap", obj)
	_, child := observability.StartSpan(ctx, "apply")
	child.End()
	observability.EndSpan(span, observability.ResultError, errors.New("boom"))

	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	apply, reconcile := spans[0], spans[1]
	if apply.Name() != "apply" || apply.Parent().SpanID() != reconcile.SpanContext().SpanID() {
		t.Errorf("child span %q is not under the reconcile span", apply.Name())
	}
	attrs := map[string]string{}
	for _, a := range reconcile.Attributes() {
		attrs[string(a.Key)] = a.Value.String()
	}
	want := map[string]string{
		"kopgo.controller": "web", "k8s.object.kind": "ConfigMap", "k8s.namespace.name": "ns",
		"k8s.object.name": "cm", "k8s.object.uid": "u1", "k8s.object.generation": "7", "kopgo.result": "error",
	}
	if diff := cmp.Diff(want, attrs); diff != "" {
		t.Errorf("reconcile span attributes (-want +got):\n%s", diff)
	}
	if reconcile.Status().Code != codes.Error {
		t.Errorf("status %v, want Error", reconcile.Status())
	}
	// Without a provider, nothing is recorded and nothing fails.
	_, noop := observability.StartReconcile(context.Background(), observability.Tracer(nil), "web", "ConfigMap", obj)
	if noop.SpanContext().IsValid() {
		t.Error("the default tracer is not a no-op")
	}
}

// Repeated events fold into one Event object on the server.
func TestEventsAreRecordedAndDeduplicated(t *testing.T) {
	ns := cluster.Namespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}
	if err := cluster.Client().Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	r, err := observability.NewRecorder(cluster.Config, cluster.Scheme(), "kopgo-test")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown()
	for range 5 {
		r.Normal(cm, "Deployed", "Apply", "children applied")
	}
	r.Warning(cm, "InvalidSpec", "Validate", "spec.port 70000: must be at most 65535")

	deadline := time.Now().Add(15 * time.Second)
	for {
		var list eventsv1.EventList
		if err := cluster.Client().List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		reasons := map[string]int{}
		for _, e := range list.Items {
			reasons[e.Reason]++
			if e.Regarding.Name != "cm" || e.ReportingController != "kopgo-test" {
				t.Errorf("event %s regarding %s by %s", e.Name, e.Regarding.Name, e.ReportingController)
			}
		}
		if reasons["Deployed"] == 1 && reasons["InvalidSpec"] == 1 {
			if len(list.Items) != 2 {
				t.Errorf("%d events, want 2 (5 identical ones folded into one)", len(list.Items))
			}
			return
		}
		if reasons["Deployed"] > 1 {
			t.Fatalf("identical events were not folded: %v", reasons)
		}
		if time.Now().After(deadline) {
			t.Fatalf("events not recorded: %v", reasons)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Events naming different related objects stay apart under one reason;
// NormalRelated on a Recorder without related objects drops the related one.
func TestRelatedEventsDoNotFold(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "parent"}}
	a := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}}
	b := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b"}}
	for _, o := range []client.Object{parent, a, b} {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	r, err := observability.NewRecorder(cluster.Config, cluster.Scheme(), "kopgo-test")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown()
	observability.NormalRelated(r, parent, a, "SecretCreated", "Apply", "Secret a created")
	observability.NormalRelated(r, parent, b, "SecretCreated", "Apply", "Secret b created")

	deadline := time.Now().Add(15 * time.Second)
	for {
		var list eventsv1.EventList
		if err := c.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range list.Items {
			if e.Related != nil {
				got = append(got, e.Related.Name+": "+e.Note)
			}
		}
		slices.Sort(got)
		if len(got) == 2 {
			if diff := cmp.Diff([]string{"a: Secret a created", "b: Secret b created"}, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("want two events with related objects, got %v", got)
		}
		time.Sleep(100 * time.Millisecond)
	}

	var plain onlyRecorder
	observability.WarningRelated(&plain, parent, a, "X", "Y", "Z")
	if plain.calls != 1 {
		t.Errorf("a plain Recorder got %d calls, want 1", plain.calls)
	}
}

// onlyRecorder implements Recorder and nothing more.
type onlyRecorder struct{ calls int }

func (o *onlyRecorder) Normal(runtime.Object, string, string, string)  { o.calls++ }
func (o *onlyRecorder) Warning(runtime.Object, string, string, string) { o.calls++ }

func TestFakeAndNopRecorders(t *testing.T) {
	var f observability.FakeRecorder
	var r observability.Recorder = &f
	r.Normal(nil, "A", "Do", "one")
	r.Warning(nil, "B", "Do", "two")
	var got []string
	for _, e := range f.Events() {
		got = append(got, e.Type+"/"+e.Reason+"/"+e.Note)
	}
	if diff := cmp.Diff([]string{"Normal/A/one", "Warning/B/two"}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	observability.Nop{}.Warning(nil, "X", "Y", "Z") // must not panic
}

// As a manager Runnable the recorder shuts down when the manager's context
// ends; shutting down twice, and recording after it, do nothing harmful.
func TestRecorderIsARunnable(t *testing.T) {
	r, err := observability.NewRecorder(cluster.Config, cluster.Scheme(), "kopgo-test")
	if err != nil {
		t.Fatal(err)
	}
	var runnable interface {
		Start(context.Context) error
		NeedLeaderElection() bool
	} = r
	if runnable.NeedLeaderElection() {
		t.Error("the recorder waits for leader election; every replica records events")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- runnable.Start(ctx) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return after its context ended")
	}
	r.Shutdown()
	r.Normal(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "late"}}, "Late", "Test", "after shutdown")
}

// A note longer than the API's 1 KiB limit is cut, not refused with the
// whole event.
func TestLongNoteIsCutNotLost(t *testing.T) {
	ns := cluster.Namespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}
	if err := cluster.Client().Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	r, err := observability.NewRecorder(cluster.Config, cluster.Scheme(), "kopgo-test")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown()
	r.Warning(cm, "Invalid", "Validate", "spec.config: "+strings.Repeat("é", 2000))
	deadline := time.Now().Add(15 * time.Second)
	for {
		var list eventsv1.EventList
		if err := cluster.Client().List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == 1 {
			note := list.Items[0].Note
			if len(note) > 1024 || !strings.HasPrefix(note, "spec.config: é") || !strings.HasSuffix(note, "…") {
				t.Errorf("note of %d bytes: %.40q...", len(note), note)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events recorded, want 1", len(list.Items))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

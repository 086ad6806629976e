package observability_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopgo/kopgo/observability"
)

var healthNames = []string{
	"kopgo_objects", "kopgo_objects_not_ready_longer_than", "kopgo_objects_stalled_longer_than",
	"kopgo_objects_oldest_not_ready_timestamp_seconds", "kopgo_objects_oldest_stalled_timestamp_seconds",
}

// t0 is the test clock's "now".
var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

func healthMetrics(t *testing.T) (*observability.Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	observability.SetHealthClock(m, func() time.Time { return t0 })
	return m, reg
}

func cond(typ string, st metav1.ConditionStatus, since time.Duration) metav1.Condition {
	return metav1.Condition{Type: typ, Status: st, Reason: "R", LastTransitionTime: metav1.NewTime(t0.Add(-since))}
}

// The conditions status.Finish leaves for each outcome.
func ready(since time.Duration) []metav1.Condition {
	return []metav1.Condition{cond("Ready", metav1.ConditionTrue, since)}
}

func failing(since time.Duration) []metav1.Condition { // a retried error
	return []metav1.Condition{cond("Ready", metav1.ConditionFalse, since), cond("Reconciling", metav1.ConditionTrue, since)}
}

func progressing(since time.Duration) []metav1.Condition { // MarkReconciling
	return []metav1.Condition{cond("Ready", metav1.ConditionUnknown, since), cond("Reconciling", metav1.ConditionTrue, since)}
}

func stalled(since time.Duration) []metav1.Condition { // a terminal error
	return []metav1.Condition{cond("Ready", metav1.ConditionFalse, since), cond("Stalled", metav1.ConditionTrue, since)}
}

func key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: "default", Name: name}
}

// objectsText is the exposition of kopgo_objects for controller "web"
// with the counts ready (True, False, Unknown), reconciling (True,
// False), stalled (True, False).
func objectsText(readyT, readyF, readyU, recT, recF, stT, stF int) string {
	return fmt.Sprintf(`# HELP kopgo_objects Objects by the status of their Ready, Reconciling and Stalled conditions, as the controller last decided them.
# TYPE kopgo_objects gauge
kopgo_objects{condition="Ready",controller="web",status="False"} %d
kopgo_objects{condition="Ready",controller="web",status="True"} %d
kopgo_objects{condition="Ready",controller="web",status="Unknown"} %d
kopgo_objects{condition="Reconciling",controller="web",status="False"} %d
kopgo_objects{condition="Reconciling",controller="web",status="True"} %d
kopgo_objects{condition="Reconciling",controller="web",status="Unknown"} 0
kopgo_objects{condition="Stalled",controller="web",status="False"} %d
kopgo_objects{condition="Stalled",controller="web",status="True"} %d
kopgo_objects{condition="Stalled",controller="web",status="Unknown"} 0
`, readyF, readyT, readyU, recF, recT, stF, stT)
}

func compare(t *testing.T, reg *prometheus.Registry, want string, names ...string) {
	t.Helper()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
}

// Each object counts once, as its last report says, however often it is
// reported; a forgotten object no longer counts, and the series stay at
// zero.
func TestObjectGauges(t *testing.T) {
	m, reg := healthMetrics(t)
	m.ObserveObject("web", key("a"), "uid-a", ready(time.Hour))
	m.ObserveObject("web", key("b"), "uid-b", failing(time.Minute))
	m.ObserveObject("web", key("c"), "uid-c", progressing(time.Minute))
	m.ObserveObject("web", key("d"), "uid-d", stalled(time.Minute))
	m.ObserveObject("web", key("e"), "uid-e", nil) // no conditions: Ready counts as Unknown
	for range 3 {
		m.ObserveObject("web", key("a"), "uid-a", ready(time.Hour)) // repeats
	}
	compare(t, reg, objectsText(1, 2, 2, 2, 3, 1, 4), "kopgo_objects")

	m.ObserveObject("web", key("b"), "uid-b", ready(0)) // recovered
	m.ObserveObject("web", key("a"), "uid-a", stalled(0))
	compare(t, reg, objectsText(1, 2, 2, 1, 4, 2, 3), "kopgo_objects")

	for _, n := range []string{"a", "b", "c", "d", "e", "never-seen"} {
		m.ForgetObject("web", key(n))
	}
	compare(t, reg, objectsText(0, 0, 0, 0, 0, 0, 0), "kopgo_objects")
	if n, err := testutil.GatherAndCount(reg, healthNames...); err != nil || n != 19 {
		t.Errorf("series of a controller with no objects: %d, %v; want 9 objects + 10 longer_than", n, err)
	}
}

// The durations come from the conditions' lastTransitionTime; an object
// counts in every threshold its duration exceeds.
func TestHealthDurations(t *testing.T) {
	m, reg := healthMetrics(t)
	m.ObserveObject("web", key("fresh"), "1", failing(time.Minute))
	m.ObserveObject("web", key("old"), "2", failing(2*time.Hour))
	m.ObserveObject("web", key("rolling"), "3", progressing(20*time.Minute))
	m.ObserveObject("web", key("stuck"), "4", stalled(10*time.Minute))
	m.ObserveObject("web", key("fine"), "5", ready(48*time.Hour))
	m.ObserveObject("web", key("at-threshold"), "6", failing(5*time.Minute)) // exactly 5m: not longer
	want := fmt.Sprintf(`# HELP kopgo_objects_not_ready_longer_than Objects whose Ready condition has not been True for longer than longer_than.
# TYPE kopgo_objects_not_ready_longer_than gauge
kopgo_objects_not_ready_longer_than{controller="web",longer_than="15m"} 2
kopgo_objects_not_ready_longer_than{controller="web",longer_than="1h"} 1
kopgo_objects_not_ready_longer_than{controller="web",longer_than="24h"} 0
kopgo_objects_not_ready_longer_than{controller="web",longer_than="5m"} 3
kopgo_objects_not_ready_longer_than{controller="web",longer_than="6h"} 0
# HELP kopgo_objects_stalled_longer_than Objects Stalled for longer than longer_than.
# TYPE kopgo_objects_stalled_longer_than gauge
kopgo_objects_stalled_longer_than{controller="web",longer_than="15m"} 0
kopgo_objects_stalled_longer_than{controller="web",longer_than="1h"} 0
kopgo_objects_stalled_longer_than{controller="web",longer_than="24h"} 0
kopgo_objects_stalled_longer_than{controller="web",longer_than="5m"} 1
kopgo_objects_stalled_longer_than{controller="web",longer_than="6h"} 0
# HELP kopgo_objects_oldest_not_ready_timestamp_seconds Since when the object not Ready the longest has not been Ready (Unix time); absent when every object is Ready.
# TYPE kopgo_objects_oldest_not_ready_timestamp_seconds gauge
kopgo_objects_oldest_not_ready_timestamp_seconds{controller="web"} %d
# HELP kopgo_objects_oldest_stalled_timestamp_seconds Since when the object Stalled the longest has been Stalled (Unix time); absent when no object is Stalled.
# TYPE kopgo_objects_oldest_stalled_timestamp_seconds gauge
kopgo_objects_oldest_stalled_timestamp_seconds{controller="web"} %d
`, t0.Add(-2*time.Hour).Unix(), t0.Add(-10*time.Minute).Unix())
	compare(t, reg, want, healthNames[1:]...)

	// Once every object is healthy, the oldest-since series go.
	for _, n := range []string{"fresh", "old", "rolling", "stuck", "at-threshold"} {
		m.ObserveObject("web", key(n), "x", ready(0))
	}
	if n, err := testutil.GatherAndCount(reg, healthNames[3:]...); err != nil || n != 0 {
		t.Errorf("oldest-since series with every object Ready: %d, %v", n, err)
	}
}

// Not Ready since when: the stored lastTransitionTime of Ready, and
// nothing the process remembers (kopgo's status package keeps it when
// Ready goes from False to Unknown; whatever the object says is what a
// restarted process reads too); a new object under the same name
// (another UID) starts afresh; a condition without a time counts from
// when it was first seen.
func TestNotReadySince(t *testing.T) {
	m, reg := healthMetrics(t)
	m.ObserveObject("web", key("a"), "uid-1", failing(2*time.Hour))
	m.ObserveObject("web", key("a"), "uid-1", progressing(2*time.Hour)) // False -> Unknown, as status.Finish writes it
	oldest := func() float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "kopgo_objects_oldest_not_ready_timestamp_seconds" {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		return 0
	}
	if got, want := oldest(), float64(t0.Add(-2*time.Hour).Unix()); got != want {
		t.Errorf("after False -> Unknown: not Ready since %v, want %v, the condition's lastTransitionTime", got, want)
	}
	m.ObserveObject("web", key("a"), "uid-1", progressing(time.Minute)) // a Ready condition someone else dated anew
	if got, want := oldest(), float64(t0.Add(-time.Minute).Unix()); got != want {
		t.Errorf("not Ready since %v, want %v: what the object says, not what the process saw before", got, want)
	}
	m.ObserveObject("web", key("a"), "uid-2", progressing(time.Minute)) // deleted and created again
	if got, want := oldest(), float64(t0.Add(-time.Minute).Unix()); got != want {
		t.Errorf("a new object of the same name: not Ready since %v, want %v", got, want)
	}
	m.ObserveObject("web", key("a"), "uid-2", ready(0))
	m.ObserveObject("web", key("a"), "uid-2", failing(time.Second)) // healthy in between: starts afresh
	if got, want := oldest(), float64(t0.Add(-time.Second).Unix()); got != want {
		t.Errorf("not Ready again: since %v, want %v", got, want)
	}
	m.ForgetObject("web", key("a"))
	m.ObserveObject("web", key("b"), "uid-b", []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse}})
	if got, want := oldest(), float64(t0.Unix()); got != want {
		t.Errorf("no lastTransitionTime: since %v, want %v (first seen)", got, want)
	}
}

// After a restart the gauges start empty and rebuild as the objects are
// reconciled again; once they all were, they read as before, durations
// included (they come from the objects, not from the process).
func TestHealthAfterRestart(t *testing.T) {
	report := func(m *observability.Metrics) {
		m.ObserveObject("web", key("a"), "uid-a", ready(time.Hour))
		m.ObserveObject("web", key("b"), "uid-b", failing(3*time.Hour))
		m.ObserveObject("web", key("c"), "uid-c", stalled(20*time.Minute))
	}
	before, regBefore := healthMetrics(t)
	report(before)
	var want strings.Builder
	if err := writeGathered(regBefore, &want); err != nil {
		t.Fatal(err)
	}

	after, regAfter := healthMetrics(t) // the new process
	if n, err := testutil.GatherAndCount(regAfter, healthNames...); err != nil || n != 0 {
		t.Errorf("before any reconcile the new process serves %d health series (%v), want none", n, err)
	}
	report(after)
	compare(t, regAfter, want.String(), healthNames...)
}

// A standby replica reconciles nothing, so it serves no health series,
// and a sum over replicas counts each object once. A replica that stops
// leading forgets the controller and is a standby again.
func TestHealthOnStandby(t *testing.T) {
	standby, reg := healthMetrics(t)
	if n, err := testutil.GatherAndCount(reg, healthNames...); err != nil || n != 0 {
		t.Errorf("standby serves %d health series (%v), want none", n, err)
	}
	standby.ObserveObject("web", key("a"), "uid-a", ready(0)) // it leads now
	standby.ObserveObject("db", key("a"), "uid-a", ready(0))
	if n, _ := testutil.GatherAndCount(reg, "kopgo_objects"); n != 18 {
		t.Errorf("leader serves %d kopgo_objects series, want 9 per controller", n)
	}
	standby.ForgetController("web") // lost leadership
	if n, _ := testutil.GatherAndCount(reg, "kopgo_objects"); n != 9 {
		t.Errorf("after ForgetController(web): %d kopgo_objects series, want db's 9", n)
	}
}

// Two Metrics on one registry share the gauges; a nil Metrics records
// nothing.
func TestHealthShared(t *testing.T) {
	m, reg := healthMetrics(t)
	again, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.ObserveObject("web", key("a"), "uid-a", ready(0))
	again.ObserveObject("web", key("b"), "uid-b", ready(0))
	compare(t, reg, objectsText(2, 0, 0, 0, 2, 0, 2), "kopgo_objects")

	var none *observability.Metrics
	none.ObserveObject("web", key("a"), "uid-a", ready(0))
	none.ForgetObject("web", key("a"))
	none.ForgetController("web")
}

// Reports from many workers and scrapes at once (run with -race).
func TestHealthConcurrent(t *testing.T) {
	m, reg := healthMetrics(t)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				k := key(fmt.Sprintf("o-%d", i%50))
				switch (i + w) % 3 {
				case 0:
					m.ObserveObject("web", k, "u", ready(0))
				case 1:
					m.ObserveObject("web", k, "u", stalled(time.Hour))
				default:
					m.ForgetObject("web", k)
				}
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			if _, err := reg.Gather(); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	for i := range 50 {
		m.ObserveObject("web", key(fmt.Sprintf("o-%d", i)), "u", ready(0))
	}
	compare(t, reg, objectsText(50, 0, 0, 0, 50, 0, 50), "kopgo_objects")
}

// The cost the loop pays per reconcile: one report of an object already
// known (the steady state).
func BenchmarkObserveObject(b *testing.B) {
	m, err := observability.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]types.NamespacedName, 1000)
	for i := range keys {
		keys[i] = types.NamespacedName{Namespace: "default", Name: fmt.Sprintf("app-%d", i)}
	}
	conds := failing(time.Minute)
	for _, k := range keys {
		m.ObserveObject("web", k, "uid", conds)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.ObserveObject("web", keys[i%len(keys)], "uid", conds)
		i++
	}
}

// writeGathered writes what reg serves of the health series in the text
// format, for testutil.GatherAndCompare.
func writeGathered(reg *prometheus.Registry, w *strings.Builder) error {
	mfs, err := reg.Gather()
	if err != nil {
		return err
	}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "kopgo_objects") {
			continue
		}
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n", mf.GetName(), mf.GetHelp(), mf.GetName())
		for _, s := range mf.GetMetric() {
			var labels []string
			for _, l := range s.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			fmt.Fprintf(w, "%s{%s} %v\n", mf.GetName(), strings.Join(labels, ","), s.GetGauge().GetValue())
		}
	}
	return nil
}

// Opt-in, an unhealthy object has a series of its own; a healthy or
// forgotten one has none, and without the opt-in no series names an
// object.
func TestObjectSeries(t *testing.T) {
	m, reg := healthMetrics(t)
	m.ObserveObject("web", key("ok"), "1", ready(time.Hour))
	m.ObserveObject("web", key("failing"), "2", failing(time.Hour))
	m.ObserveObject("web", key("stuck"), "3", stalled(10*time.Minute))
	names := []string{"kopgo_object_not_ready_since_timestamp_seconds", "kopgo_object_stalled_since_timestamp_seconds"}
	if n, err := testutil.GatherAndCount(reg, names...); err != nil || n != 0 {
		t.Errorf("per-object series without the opt-in: %d, %v", n, err)
	}
	if err := m.RegisterObjectSeries(reg); err != nil {
		t.Fatal(err)
	}
	if err := m.RegisterObjectSeries(reg); err == nil {
		t.Error("a second RegisterObjectSeries on one registry succeeded")
	}
	m.ForgetObject("web", key("gone"))
	want := fmt.Sprintf(`# HELP kopgo_object_not_ready_since_timestamp_seconds Since when the object has not been Ready (Unix time); only objects not Ready have a series.
# TYPE kopgo_object_not_ready_since_timestamp_seconds gauge
kopgo_object_not_ready_since_timestamp_seconds{controller="web",name="failing",namespace="default"} %d
kopgo_object_not_ready_since_timestamp_seconds{controller="web",name="stuck",namespace="default"} %d
# HELP kopgo_object_stalled_since_timestamp_seconds Since when the object has been Stalled (Unix time); only Stalled objects have a series.
# TYPE kopgo_object_stalled_since_timestamp_seconds gauge
kopgo_object_stalled_since_timestamp_seconds{controller="web",name="stuck",namespace="default"} %d
`, t0.Add(-time.Hour).Unix(), t0.Add(-10*time.Minute).Unix(), t0.Add(-10*time.Minute).Unix())
	compare(t, reg, want, names...)

	m.ObserveObject("web", key("failing"), "2", ready(0))
	m.ForgetObject("web", key("stuck"))
	if n, err := testutil.GatherAndCount(reg, names...); err != nil || n != 0 {
		t.Errorf("per-object series once healthy or gone: %d, %v", n, err)
	}
	var none *observability.Metrics
	if err := none.RegisterObjectSeries(reg); err == nil {
		t.Error("RegisterObjectSeries of a nil Metrics succeeded")
	}
}

// The cost of a scrape of the health series of 10,000 objects, a third
// of them unhealthy: the reports wait on the lock for the summary only.
func BenchmarkHealthScrape(b *testing.B) {
	reg := prometheus.NewRegistry()
	m, err := observability.NewMetrics(reg)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10000 {
		conds := ready(time.Hour)
		switch i % 3 {
		case 1:
			conds = failing(20 * time.Minute)
		case 2:
			conds = stalled(2 * time.Hour)
		}
		m.ObserveObject("web", types.NamespacedName{Namespace: "default", Name: fmt.Sprintf("app-%d", i)}, "uid", conds)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}

package observability

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Object health: how many of a controller's objects are Ready, Reconciling
// and Stalled, and for how long the unhealthy ones have been so, kept from
// the conditions the reconcile loop decided (status.Finish), one report
// per reconcile. The series are computed when they are scraped, from one
// small record per object; none of them names an object.

// The condition types and statuses the object gauges count, spelled as
// Kubernetes writes them (kubectl, kstatus and Flux's gotk_* metrics
// spell them so too).
var (
	healthConditions = [...]string{"Ready", "Reconciling", "Stalled"}
	healthStatuses   = [...]metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}
)

// healthThresholds are the values of the longer_than label of
// kopgo_objects_not_ready_longer_than and kopgo_objects_stalled_longer_than,
// in Prometheus's duration notation: each series counts the objects
// unhealthy for longer than its threshold.
var healthThresholds = [...]struct {
	Label    string
	Duration time.Duration
}{
	{"5m", 5 * time.Minute},
	{"15m", 15 * time.Minute},
	{"1h", time.Hour},
	{"6h", 6 * time.Hour},
	{"24h", 24 * time.Hour},
}

// objectHealth is what the gauges know of one object.
type objectHealth struct {
	uid         types.UID
	ready       metav1.ConditionStatus
	reconciling bool
	stalled     bool
	// Since when the object has been not Ready, and Stalled: the
	// condition's lastTransitionTime as stored on the object (kopgo's
	// status package keeps Ready's across False <-> Unknown), so that a
	// restart or a new leader reads the same; for a condition without one,
	// when this process first saw it so. Zero when healthy.
	notReadySince time.Time
	stalledSince  time.Time
}

// healthCollector keeps the last reported health of every object, by
// controller, and turns it into series when scraped.
type healthCollector struct {
	mu          sync.Mutex
	controllers map[string]map[types.NamespacedName]objectHealth
	now         func() time.Time

	objects, notReady, stalled, oldestNotReady, oldestStalled *prometheus.Desc
}

func newHealthCollector() *healthCollector {
	return &healthCollector{
		controllers: map[string]map[types.NamespacedName]objectHealth{},
		now:         time.Now,
		objects: prometheus.NewDesc("kopgo_objects",
			"Objects by the status of their Ready, Reconciling and Stalled conditions, as the controller last decided them.",
			[]string{"controller", "condition", "status"}, nil),
		notReady: prometheus.NewDesc("kopgo_objects_not_ready_longer_than",
			"Objects whose Ready condition has not been True for longer than longer_than.",
			[]string{"controller", "longer_than"}, nil),
		stalled: prometheus.NewDesc("kopgo_objects_stalled_longer_than",
			"Objects Stalled for longer than longer_than.",
			[]string{"controller", "longer_than"}, nil),
		oldestNotReady: prometheus.NewDesc("kopgo_objects_oldest_not_ready_timestamp_seconds",
			"Since when the object not Ready the longest has not been Ready (Unix time); absent when every object is Ready.",
			[]string{"controller"}, nil),
		oldestStalled: prometheus.NewDesc("kopgo_objects_oldest_stalled_timestamp_seconds",
			"Since when the object Stalled the longest has been Stalled (Unix time); absent when no object is Stalled.",
			[]string{"controller"}, nil),
	}
}

// ObserveObject records the health of one object of controller after a
// reconcile: conditions are its conditions as the reconcile left them
// (those status.Finish decided and the status write stored, or found
// already stored), of which Ready, Reconciling and Stalled count. key
// names the object (its namespace, empty for a cluster-scoped one, and
// name) and uid tells one incarnation of that name from the next.
//
// Call it once per reconcile that settled the object's conditions, with
// what is stored: after a failed status write, report nothing (the stored
// conditions did not change). Reporting the same object again replaces
// its record, so repeats cost nothing and never count twice. A Ready
// condition that is absent counts as Unknown; Reconciling and Stalled
// count as True only when present and True, as kstatus reads them.
//
// How long an object has been not Ready or Stalled is measured from the
// condition's lastTransitionTime and from nothing this process remembers,
// so a restarted operator or a new leader reports the same durations as
// the old one once it has reconciled the object. kopgo's status package
// (status.Finish, status.Set) keeps Ready's lastTransitionTime when Ready
// moves between False and Unknown, so the time is that of the last
// transition away from Ready=True. Only a condition without a
// lastTransitionTime is counted from when this process first saw it so.
//
// The cost is one map update under a mutex (see BenchmarkObserveObject).
func (m *Metrics) ObserveObject(controller string, key types.NamespacedName, uid types.UID, conditions []metav1.Condition) {
	if m == nil || m.health == nil {
		return
	}
	m.health.observe(controller, key, uid, conditions)
}

// ForgetObject removes the object key of controller from the gauges: call
// it when the object is gone (the reconcile found it deleted, its cleanup
// finished, or it left the controller's label selector). Forgetting an
// object the gauges do not hold does nothing.
func (m *Metrics) ForgetObject(controller string, key types.NamespacedName) {
	if m == nil || m.health == nil {
		return
	}
	h := m.health
	h.mu.Lock()
	delete(h.controllers[controller], key)
	h.mu.Unlock()
}

// ForgetController removes every object of controller, and its series,
// from the gauges: call it when the controller stops in a process that
// goes on running (a replica that lost leadership and keeps serving), so
// that it reports nothing, as a standby does, until it leads again and
// has reconciled its objects anew.
//
// A controller's series appear with its first [Metrics.ObserveObject], so
// a standby replica, whose controllers never reconcile, serves none, and
// a sum across replicas counts each object once. Once they appeared they
// stay, at zero if need be, until ForgetController.
func (m *Metrics) ForgetController(controller string) {
	if m == nil || m.health == nil {
		return
	}
	h := m.health
	h.mu.Lock()
	delete(h.controllers, controller)
	h.mu.Unlock()
}

func (h *healthCollector) observe(controller string, key types.NamespacedName, uid types.UID, conditions []metav1.Condition) {
	s := objectHealth{uid: uid, ready: metav1.ConditionUnknown}
	var readySince, stalledSince time.Time
	for i := range conditions {
		c := &conditions[i]
		switch c.Type {
		case "Ready":
			s.ready, readySince = c.Status, c.LastTransitionTime.Time
		case "Reconciling":
			s.reconciling = c.Status == metav1.ConditionTrue
		case "Stalled":
			s.stalled, stalledSince = c.Status == metav1.ConditionTrue, c.LastTransitionTime.Time
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	objs := h.controllers[controller]
	if objs == nil {
		objs = map[types.NamespacedName]objectHealth{}
		h.controllers[controller] = objs
	}
	old, known := objs[key]
	known = known && old.uid == uid
	if s.ready != metav1.ConditionTrue {
		s.notReadySince = h.since(readySince, known, old.notReadySince)
	}
	if s.stalled {
		s.stalledSince = h.since(stalledSince, known, old.stalledSince)
	}
	objs[key] = s
}

// since is when an unhealthy state began: at the condition's transition
// as stored; for a condition that has none, when this process first saw
// the object in that state.
func (h *healthCollector) since(transition time.Time, known bool, before time.Time) time.Time {
	switch {
	case !transition.IsZero():
		return transition
	case known && !before.IsZero():
		return before
	}
	return h.now()
}

// Describe implements prometheus.Collector.
func (h *healthCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- h.objects
	ch <- h.notReady
	ch <- h.stalled
	ch <- h.oldestNotReady
	ch <- h.oldestStalled
}

// controllerHealth is the summary of one controller's objects at a scrape.
type controllerHealth struct {
	controller              string
	counts                  [len(healthConditions)][len(healthStatuses)]int
	notReady, stalled       [len(healthThresholds)]int
	oldestNR, oldestStalled time.Time
}

// Collect implements prometheus.Collector: it summarises under the lock
// and sends after.
func (h *healthCollector) Collect(ch chan<- prometheus.Metric) {
	now := h.now()
	h.mu.Lock()
	sums := make([]controllerHealth, 0, len(h.controllers))
	for controller, objs := range h.controllers {
		sums = append(sums, summarise(controller, objs, now))
	}
	h.mu.Unlock()
	slices.SortFunc(sums, func(a, b controllerHealth) int {
		switch {
		case a.controller < b.controller:
			return -1
		case a.controller > b.controller:
			return 1
		}
		return 0
	})
	for _, s := range sums {
		for i, c := range healthConditions {
			for j, st := range healthStatuses {
				ch <- prometheus.MustNewConstMetric(h.objects, prometheus.GaugeValue, float64(s.counts[i][j]), s.controller, c, string(st))
			}
		}
		for i, t := range healthThresholds {
			ch <- prometheus.MustNewConstMetric(h.notReady, prometheus.GaugeValue, float64(s.notReady[i]), s.controller, t.Label)
			ch <- prometheus.MustNewConstMetric(h.stalled, prometheus.GaugeValue, float64(s.stalled[i]), s.controller, t.Label)
		}
		if !s.oldestNR.IsZero() {
			ch <- prometheus.MustNewConstMetric(h.oldestNotReady, prometheus.GaugeValue, unixSeconds(s.oldestNR), s.controller)
		}
		if !s.oldestStalled.IsZero() {
			ch <- prometheus.MustNewConstMetric(h.oldestStalled, prometheus.GaugeValue, unixSeconds(s.oldestStalled), s.controller)
		}
	}
}

func summarise(controller string, objs map[types.NamespacedName]objectHealth, now time.Time) controllerHealth {
	s := controllerHealth{controller: controller}
	for _, o := range objs {
		s.counts[0][statusIndex(o.ready)]++
		s.counts[1][boolIndex(o.reconciling)]++
		s.counts[2][boolIndex(o.stalled)]++
		if o.ready != metav1.ConditionTrue {
			countLonger(&s.notReady, now.Sub(o.notReadySince))
			if s.oldestNR.IsZero() || o.notReadySince.Before(s.oldestNR) {
				s.oldestNR = o.notReadySince
			}
		}
		if o.stalled {
			countLonger(&s.stalled, now.Sub(o.stalledSince))
			if s.oldestStalled.IsZero() || o.stalledSince.Before(s.oldestStalled) {
				s.oldestStalled = o.stalledSince
			}
		}
	}
	return s
}

// countLonger counts d in every threshold it exceeds.
func countLonger(counts *[len(healthThresholds)]int, d time.Duration) {
	for i, t := range healthThresholds {
		if d > t.Duration {
			counts[i]++
		}
	}
}

// statusIndex is st's place in healthStatuses; anything but True and
// False is Unknown.
func statusIndex(st metav1.ConditionStatus) int {
	switch st {
	case metav1.ConditionTrue:
		return 0
	case metav1.ConditionFalse:
		return 1
	}
	return 2
}

func boolIndex(b bool) int {
	if b {
		return 0
	}
	return 1
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

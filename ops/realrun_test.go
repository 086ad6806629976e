package ops_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/ops"
	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

// timeScale compresses the rules' time for the real run: every For and
// rate window is divided by it (ops.ScaledAlerts), so that 15 minutes
// last 45 seconds.
const timeScale = 20

// runScenario is one controller of the real run: an operator (one or two
// replicas) reconciling its own Widgets, with one fault or none.
type runScenario struct {
	controller string
	replicas   int
	opts       procOptions
	// want are the alerts that must fire naming this controller (or its
	// lease), and no other; none for the healthy one.
	want []string
	// allow are alerts that may fire for this controller besides want,
	// being true of its fault too (see the scenario).
	allow []string
	// external: the operator keeps a resource per Widget in the test's
	// external system (fakeSystem), which answers every failEvery-th of
	// its calls 503 (0: none).
	external  bool
	failEvery int
}

var scenarios = []runScenario{
	{controller: "ops-healthy", replicas: 2, opts: procOptions{lease: "8s/6s/1s"}},
	{controller: "ops-stall", replicas: 1, want: []string{"KopgoObjectsStalled"}},
	{controller: "ops-notready", replicas: 1, want: []string{"KopgoObjectsNotReady"}},
	{controller: "ops-errors", replicas: 1, want: []string{"KopgoReconcileErrors"}},
	{controller: "ops-hotloop", replicas: 1, want: []string{"KopgoHotLoop"}},
	{controller: "ops-backlog", replicas: 1, opts: procOptions{workers: 1}, want: []string{"KopgoWorkqueueBacklogGrowing"}},
	{controller: "ops-stuck", replicas: 1, opts: procOptions{workers: 1}, want: []string{"KopgoControllerStuck"}},
	// The leader's lease says 60 s: killed, it leaves no leader for that
	// long (a standby that cannot take over), 4 times the scaled For.
	{controller: "ops-leader", replicas: 2, opts: procOptions{lease: "60s/40s/2s"}, want: []string{"KopgoNoLeader"}},
	// Operators of a resource outside the cluster (external.Reconciler),
	// one per Widget in the test's HTTP system: a healthy one, and one
	// whose system answers every second call 503. Each failed call fails
	// its reconcile (the object is not Ready, retried after the 503's
	// Retry-After), so KopgoReconcileErrors (error_kind unavailable) is
	// true of that controller as well and may fire: both alerts say what
	// is so, and KopgoExternalCallsFailing says where (docs/operations.md).
	{controller: "ops-external", replicas: 1, external: true},
	{controller: "ops-external-faulty", replicas: 1, external: true, failEvery: 2,
		want: []string{"KopgoExternalCallsFailing"}, allow: []string{"KopgoReconcileErrors"}},
}

// externalWidgets is how many Widgets each external operator keeps.
const externalWidgets = 8

// Panels whose queries cannot return data on this run, and why.
var panelsWithoutData = map[string]string{}

// A real run: operators of Widgets on testkit's full cluster, one per
// fault and one healthy, all at once, scraped every second into a TSDB
// and watched by the alert rules (time scaled by timeScale), each fault's
// alert firing for its controller and no alert for the healthy one; then
// every dashboard panel's query over those series, and the object gauges
// against the objects' conditions at the end, after a leader handover and
// after a restart.
func TestRealRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster and twelve operator processes")
	}
	began := time.Now()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, widget.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	cluster, err := testkit.Start(t.Context(), testkit.Options{Full: true, Scheme: scheme, CRDs: []*apiextensionsv1.CustomResourceDefinition{widget.CRD()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Stop)
	t.Logf("cluster ready in %v", time.Since(began).Round(100*time.Millisecond))
	ns := cluster.Namespace(t)
	c := cluster.Client()

	alerts, err := ops.ScaledAlerts(timeScale)
	if err != nil {
		t.Fatal(err)
	}
	mon := newMonitor(t, alerts)
	monCtx, stopMonitor := context.WithCancel(t.Context())
	monDone := mon.run(monCtx)
	t.Cleanup(func() { stopMonitor(); <-monDone })

	// The external system of the external operators.
	failEvery := map[string]int{}
	for _, s := range scenarios {
		failEvery[s.controller] = s.failEvery
	}
	system := startFakeSystem(t, failEvery)
	opts := func(s runScenario) procOptions {
		o := s.opts
		if s.external {
			o.external = system.URL(s.controller)
		}
		return o
	}

	// The operators, all at once; the leader scenario's standby once its
	// first replica leads, so that which one leads is known.
	procs := map[string][]*operatorProc{}
	var spawned []*operatorProc
	for _, s := range scenarios {
		p := spawnOperator(t, cluster, ns, s.controller, s.controller+"-a", opts(s))
		procs[s.controller] = append(procs[s.controller], p)
		spawned = append(spawned, p)
	}
	for _, p := range spawned {
		p.await(t, mon)
	}
	for _, s := range scenarios {
		if s.replicas == 2 {
			waitLeader(t, procs[s.controller][0], s.controller, 30*time.Second)
			p := startOperator(t, mon, cluster, ns, s.controller, s.controller+"-b", opts(s))
			procs[s.controller] = append(procs[s.controller], p)
		}
	}
	t.Logf("operators serving at %.1fs of the run", time.Since(mon.start).Seconds())

	// The objects and the faults.
	ctx := t.Context()
	healthyWidgets(t, c, ns)
	stalledWidgets(t, c, ns)
	for i := range 2 {
		mk(t, c, ns, "ops-notready", fmt.Sprint("never-ready-", i), 1, faultNotReady, rollingOutSince(16*time.Minute))
	}
	for i := range 3 {
		mk(t, c, ns, "ops-notready", fmt.Sprint("fine-", i), 0, "", nil)
	}
	for i := range 6 {
		mk(t, c, ns, "ops-errors", fmt.Sprint("failing-", i), 0, faultError, nil)
	}
	for i := range 3 {
		mk(t, c, ns, "ops-hotloop", fmt.Sprint("looping-", i), 0, faultHotLoop, nil)
		mk(t, c, ns, "ops-hotloop", fmt.Sprint("fine-", i), 0, "", nil)
		mk(t, c, ns, "ops-leader", fmt.Sprint("fine-", i), 0, "", nil)
	}
	for i := range externalWidgets {
		mk(t, c, ns, "ops-external", fmt.Sprint("remote-", i), int64(i%3), "", nil)
		mk(t, c, ns, "ops-external-faulty", fmt.Sprint("remote-", i), int64(i%3), "", nil)
	}
	mk(t, c, ns, "ops-stuck", "stuck", 0, faultStuck, nil)
	time.Sleep(2 * time.Second) // the stuck object takes the only worker
	for i := range 5 {
		mk(t, c, ns, "ops-stuck", fmt.Sprint("waiting-", i), 0, "", nil)
	}

	// Work that goes on during the run: new slow objects for the backlog
	// (120 at once, then 3 a second against 1 a second reconciled), and
	// the healthy controller's spec changes and replacements.
	workCtx, stopWork := context.WithCancel(ctx)
	var work sync.WaitGroup
	t.Cleanup(func() { stopWork(); work.Wait() })
	work.Go(func() { backlog(workCtx, t, c, ns) })
	work.Go(func() { churn(workCtx, t, c, ns) })

	// The leader killed (SIGKILL: its lease stays held for 60 s).
	leaderKilled := -1.0
	work.Go(func() {
		select {
		case <-workCtx.Done():
			return
		case <-time.After(time.Until(mon.start.Add(20 * time.Second))):
		}
		procs["ops-leader"][0].stop(syscall.SIGKILL)
		leaderKilled = time.Since(mon.start).Seconds()
	})

	// The run lasts until every fault's alert fired and the leader's came
	// back, and at least 90 s.
	deadline := time.Now().Add(200 * time.Second)
	for {
		time.Sleep(2 * time.Second)
		fired, log := mon.fired(), mon.log()
		done := time.Since(mon.start) >= 90*time.Second
		for _, s := range scenarios {
			for _, a := range s.want {
				if !slices.Contains(fired[s.controller], a) {
					done = false
				}
			}
		}
		if l, ok := log[alertKey{"KopgoNoLeader", "ops-leader"}]; !ok || l.resolved < 0 {
			done = false
		}
		if done || time.Now().After(deadline) {
			break
		}
	}
	stopWork()
	work.Wait()
	end := time.Now()
	runLength := end.Sub(mon.start)
	t.Logf("alert run: %.0fs; leader of ops-leader killed at %.1fs; alerts (seconds since the run began):\n%s",
		runLength.Seconds(), leaderKilled, mon.report())
	t.Logf("external system:\n%s", system.report())

	// Each fault's alert fired for its controller, and no other alert
	// did (but those its scenario allows); none fired for the healthy
	// controllers.
	fired := mon.fired()
	for _, s := range scenarios {
		got := slices.DeleteFunc(slices.Clone(fired[s.controller]), func(a string) bool { return slices.Contains(s.allow, a) })
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("alerts fired for %s (-want +got):\n%s", s.controller, diff)
		}
		delete(fired, s.controller)
	}
	for controller, names := range fired {
		t.Errorf("alerts %v fired for %q, which is no controller of the run", names, controller)
	}
	if l := mon.log()[alertKey{"KopgoReconcileErrors", "ops-errors"}]; l.labels.Get("error_kind") != "unavailable" {
		t.Errorf("KopgoReconcileErrors for ops-errors names error_kind %q, want unavailable", l.labels.Get("error_kind"))
	}
	checkExternal(t, mon, system, end)

	checkPanels(t, mon, end)

	// The object gauges equal the objects' conditions at the end of the
	// run (the backlog still works through its queue, the stuck
	// controller reconciled nothing, and the faulty external system keeps
	// failing objects' calls: none has settled).
	for _, s := range scenarios {
		if s.controller == "ops-backlog" || s.controller == "ops-stuck" || s.failEvery > 0 {
			continue
		}
		waitGaugesMatch(t, c, ns, s.controller, procs[s.controller], "at the end of the run")
	}

	handoverAndRestart(t, mon, cluster, ns, procs["ops-healthy"])
	t.Logf("real run: %v in all", time.Since(began).Round(time.Second))
}

// checkExternal checks what the external operators did to their system:
// one resource per Widget, none twice (a create answered 503 made
// nothing, and was retried), the faulty system's 503s answered, and the
// alerts about the calls naming the outcome the 503s are (unavailable).
func checkExternal(t *testing.T, mon *monitor, system *fakeSystem, end time.Time) {
	t.Helper()
	// How near KopgoHotLoop the external operators came (its threshold is
	// 0.1): creates cost several reconciles an object (finalizer, pending
	// mark, ID), then one check per period.
	perObject := fmt.Sprintf(`max_over_time((sum by (controller) (rate(kopgo_reconcile_total{controller=~"ops-external.*"}[%ds]))`+
		` / clamp_min(sum by (controller) (kopgo_objects{controller=~"ops-external.*", condition="Ready"}), 1))[%ds:1s])`,
		600/timeScale, int(end.Sub(mon.start).Seconds()))
	if v, err := mon.query(t.Context(), perObject, end); err != nil {
		t.Error(err)
	} else {
		for _, s := range v {
			t.Logf("%s: at most %.3f reconciles a second per object over the run", s.Metric.Get("controller"), s.F)
		}
	}
	for _, s := range scenarios {
		if !s.external {
			continue
		}
		resources, failed := system.count(s.controller, http.StatusServiceUnavailable)
		switch {
		case s.failEvery == 0 && (resources != externalWidgets || failed != 0):
			t.Errorf("%s: the system holds %d resources and answered %d calls 503, want %d and 0", s.controller, resources, failed, externalWidgets)
		case s.failEvery > 0 && (resources > externalWidgets || failed == 0):
			t.Errorf("%s: the system holds %d resources and answered %d calls 503, want at most %d and some", s.controller, resources, failed, externalWidgets)
		}
	}
	for k, l := range mon.log() {
		if k.controller != "ops-external-faulty" || l.firstFiring < 0 {
			continue
		}
		label, want := "outcome", "unavailable"
		if k.alert == "KopgoReconcileErrors" {
			label = "error_kind"
		}
		if got := l.labels.Get(label); got != want {
			t.Errorf("%s for %s names %s %q, want %s", k.alert, k.controller, label, got, want)
		}
	}
}

// healthyWidgets are the healthy controller's objects: ConfigMaps only,
// Deployments that roll out, and two that were Stalled and not Ready
// before the run (backdated conditions) and are healthy now: the loop's
// verdict, not the stored past, is what the gauges count.
func healthyWidgets(t *testing.T, c client.Client, ns string) {
	t.Helper()
	for i := range 10 {
		mk(t, c, ns, "ops-healthy", fmt.Sprint("config-", i), 0, "", nil)
	}
	for i := range 4 {
		mk(t, c, ns, "ops-healthy", fmt.Sprint("app-", i), 1, "", nil)
	}
	for i := range 2 {
		mk(t, c, ns, "ops-healthy", fmt.Sprint("recovered-", i), 0, "", backdated(16*time.Minute, true))
	}
}

// stalledWidgets are three objects whose spec cannot be built, Stalled
// since 6 minutes before the run (the conditions' lastTransitionTime, as
// an operator restarted over them finds them), and three fine ones.
func stalledWidgets(t *testing.T, c client.Client, ns string) {
	t.Helper()
	for i := range 3 {
		mk(t, c, ns, "ops-stall", fmt.Sprint("invalid-", i), 0, faultStall, backdated(6*time.Minute, true))
		mk(t, c, ns, "ops-stall", fmt.Sprint("fine-", i), 0, "", nil)
	}
}

// backdated are the conditions of an object not Ready (and Stalled) since
// age ago.
func backdated(age time.Duration, stalled bool) []metav1.Condition {
	since := metav1.NewTime(time.Now().Add(-age).Truncate(time.Second))
	conds := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Invalid", Message: "before the run", LastTransitionTime: since}}
	if stalled {
		conds = append(conds, metav1.Condition{Type: "Stalled", Status: metav1.ConditionTrue, Reason: "Invalid", Message: "before the run", LastTransitionTime: since})
	}
	return conds
}

// rollingOutSince are the conditions Sync gives an object whose children
// are not ready yet (Ready=Unknown, Reconciling=True), since age ago.
func rollingOutSince(age time.Duration) []metav1.Condition {
	since := metav1.NewTime(time.Now().Add(-age).Truncate(time.Second))
	return []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionUnknown, Reason: "Progressing", Message: "before the run", LastTransitionTime: since},
		{Type: "Reconciling", Status: metav1.ConditionTrue, Reason: "Progressing", Message: "before the run", LastTransitionTime: since},
	}
}

// mk creates a Widget of controller. With conditions, it is created
// outside the controller's selector, its status applied as the
// controller's field manager (as the operator itself wrote it before a
// restart: a condition another manager owns is one kopgo's status apply
// cannot remove), and then labelled, so that the operator's first sight
// of it has these conditions stored.
func mk(t *testing.T, c client.Client, ns, controller, name string, size int64, fault string, conditions []metav1.Condition) {
	t.Helper()
	if err := mkErr(t.Context(), c, ns, controller, name, size, fault, conditions); err != nil {
		t.Fatal(err)
	}
}

func mkErr(ctx context.Context, c client.Client, ns, controller, name string, size int64, fault string, conditions []metav1.Condition) error {
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: controller + "-" + name}, Spec: widget.WidgetSpec{Size: size}}
	if fault != "" {
		w.Annotations = map[string]string{faultAnnotation: fault}
	}
	if len(conditions) == 0 {
		w.Labels = map[string]string{scenarioLabel: controller}
		return c.Create(ctx, w)
	}
	if err := c.Create(ctx, w); err != nil {
		return err
	}
	conds := make([]any, 0, len(conditions))
	for _, cond := range conditions {
		conds = append(conds, map[string]any{"type": cond.Type, "status": string(cond.Status), "reason": cond.Reason,
			"message": cond.Message, "lastTransitionTime": cond.LastTransitionTime.UTC().Format(time.RFC3339)})
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": conds}}}
	u.SetGroupVersionKind(widget.GroupVersion.WithKind("Widget"))
	u.SetNamespace(ns)
	u.SetName(w.Name)
	if err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(controller), client.ForceOwnership); err != nil {
		return fmt.Errorf("backdate %s: %w", w.Name, err)
	}
	patch := client.MergeFrom(w.DeepCopy())
	w.Labels = map[string]string{scenarioLabel: controller}
	return c.Patch(ctx, w, patch)
}

// backlog creates slow Widgets: 120 at once, then 3 a second.
func backlog(ctx context.Context, t *testing.T, c client.Client, ns string) {
	t.Helper()
	n := 0
	create := func() bool {
		n++
		if err := mkErr(ctx, c, ns, "ops-backlog", fmt.Sprint("slow-", n), 0, faultSlow, nil); err != nil {
			if ctx.Err() == nil {
				t.Errorf("backlog: %v", err)
			}
			return false
		}
		return true
	}
	for range 120 {
		if !create() {
			return
		}
	}
	tick := time.NewTicker(time.Second / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if !create() {
				return
			}
		}
	}
}

// churn changes the healthy controllers' objects as users do: every 10 s
// one Deployment scaled to 0 (pruned) or back to 1 and one external
// Widget's size changed (an Update of its resource), and every 20 s one
// object replaced by a new one.
func churn(ctx context.Context, t *testing.T, c client.Client, ns string) {
	t.Helper()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w := &widget.Widget{}
		key := client.ObjectKey{Namespace: ns, Name: fmt.Sprint("ops-healthy-app-", i%4)}
		if err := c.Get(ctx, key, w); err != nil {
			if ctx.Err() == nil {
				t.Errorf("churn: %v", err)
			}
			return
		}
		patch := client.MergeFrom(w.DeepCopy())
		w.Spec.Size = 1 - w.Spec.Size
		if err := c.Patch(ctx, w, patch); err != nil && ctx.Err() == nil {
			t.Errorf("churn: %v", err)
		}
		// A healthy external Widget's spec changed: an Update call.
		rw := &widget.Widget{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprint("ops-external-remote-", i%externalWidgets)}, rw); err == nil {
			patch := client.MergeFrom(rw.DeepCopy())
			rw.Spec.Size++
			if err := c.Patch(ctx, rw, patch); err != nil && ctx.Err() == nil {
				t.Errorf("churn: %v", err)
			}
		} else if ctx.Err() == nil {
			t.Errorf("churn: %v", err)
		}
		if i%2 == 1 {
			old := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprint("ops-healthy-config-", i/2)}}
			if err := c.Delete(ctx, old); client.IgnoreNotFound(err) != nil && ctx.Err() == nil {
				t.Errorf("churn: %v", err)
			}
			if err := mkErr(ctx, c, ns, "ops-healthy", fmt.Sprint("new-", i/2), 0, "", nil); err != nil && ctx.Err() == nil {
				t.Errorf("churn: %v", err)
			}
		}
	}
}

// checkPanels evaluates every panel's queries over the run's series at
// end, with the controller variable at All and a one-minute rate window:
// each panel returns at least one number, unless panelsWithoutData says
// why it cannot.
func checkPanels(t *testing.T, mon *monitor, end time.Time) {
	t.Helper()
	vars := strings.NewReplacer("$__rate_interval", "1m", "$controller", ".*")
	var lines []string
	for _, r := range ops.Rows() {
		for _, p := range r.Panels {
			n := 0
			for _, q := range p.Queries {
				v, err := mon.query(t.Context(), vars.Replace(q.Expr), end)
				if err != nil {
					t.Errorf("panel %q: %s: %v", p.Title, q.Expr, err)
					continue
				}
				for _, s := range v {
					if !math.IsNaN(s.F) {
						n++
					}
				}
			}
			reason, skip := panelsWithoutData[p.Title]
			switch {
			case n == 0 && !skip:
				t.Errorf("panel %q returns no data on the real run", p.Title)
			case n > 0 && skip:
				t.Errorf("panel %q returns data: remove it from panelsWithoutData (%s)", p.Title, reason)
			}
			line := fmt.Sprintf("  %-28s %3d series", p.Title, n)
			if skip {
				line += " (skipped: " + reason + ")"
			}
			lines = append(lines, line)
		}
	}
	t.Logf("dashboard panels on the real run:\n%s", strings.Join(lines, "\n"))
}

// waitLeader waits until p reports it leads lease.
func waitLeader(t *testing.T, p *operatorProc, lease string, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		if v, n := sum(scrapeNow(t, p), "leader_election_master_status", "name", lease); n > 0 && v == 1 {
			return time.Since(start)
		}
		if p.exited() {
			t.Fatalf("%s exited; its log: %s", p.instance, tail(p.logPath))
		}
		if time.Since(start) > timeout {
			t.Fatalf("%s does not lead %s after %v; its log: %s", p.instance, lease, timeout, tail(p.logPath))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var direct = &http.Client{Timeout: 2 * time.Second}

// scrapeNow scrapes p now; a process that does not answer has no series.
func scrapeNow(t *testing.T, p *operatorProc) []sample {
	t.Helper()
	if p.exited() {
		return nil
	}
	ss, err := fetch(t.Context(), direct, fmt.Sprintf("http://127.0.0.1:%d/metrics", p.port))
	if err != nil {
		return nil
	}
	return ss
}

// sum adds the values of the series named name whose labels have the
// values kv (name, value, ...), and says how many there were.
func sum(ss []sample, name string, kv ...string) (float64, int) {
	total, n := 0.0, 0
	for _, s := range ss {
		if s.labels.Get("__name__") != name {
			continue
		}
		match := true
		for i := 0; i+1 < len(kv); i += 2 {
			if s.labels.Get(kv[i]) != kv[i+1] {
				match = false
			}
		}
		if match {
			total += s.value
			n++
		}
	}
	return total, n
}

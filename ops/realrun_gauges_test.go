package ops_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

// conditionCounts counts controller's Widgets by the status of their
// Ready, Reconciling and Stalled conditions, as kopgo_objects does: a
// missing Ready is Unknown, Reconciling and Stalled are True only when
// present and True.
func conditionCounts(t *testing.T, c client.Client, ns, controller string) map[string]float64 {
	t.Helper()
	var list widget.WidgetList
	if err := c.List(t.Context(), &list, client.InNamespace(ns), client.MatchingLabels{scenarioLabel: controller}); err != nil {
		t.Fatal(err)
	}
	counts := zeroCounts()
	for _, w := range list.Items {
		ready, reconciling, stalled := metav1.ConditionUnknown, metav1.ConditionFalse, metav1.ConditionFalse
		for _, cond := range w.Status.Conditions {
			switch cond.Type {
			case "Ready":
				ready = cond.Status
			case "Reconciling":
				if cond.Status == metav1.ConditionTrue {
					reconciling = metav1.ConditionTrue
				}
			case "Stalled":
				if cond.Status == metav1.ConditionTrue {
					stalled = metav1.ConditionTrue
				}
			}
		}
		counts["Ready/"+string(ready)]++
		counts["Reconciling/"+string(reconciling)]++
		counts["Stalled/"+string(stalled)]++
	}
	return counts
}

// gaugeCounts reads kopgo_objects of controller from the replicas that
// answer, summed (a standby serves none).
func gaugeCounts(t *testing.T, controller string, procs []*operatorProc) map[string]float64 {
	t.Helper()
	counts := zeroCounts()
	for _, p := range procs {
		for _, s := range scrapeNow(t, p) {
			if s.labels.Get("__name__") == "kopgo_objects" && s.labels.Get("controller") == controller {
				counts[s.labels.Get("condition")+"/"+s.labels.Get("status")] += s.value
			}
		}
	}
	return counts
}

func zeroCounts() map[string]float64 {
	m := map[string]float64{}
	for _, c := range []string{"Ready", "Reconciling", "Stalled"} {
		for _, s := range []string{"True", "False", "Unknown"} {
			m[c+"/"+s] = 0
		}
	}
	return m
}

// waitGaugesMatch waits up to 30 s until controller's gauges equal its
// objects' conditions, twice in a row a second apart, and returns how
// long that took.
func waitGaugesMatch(t *testing.T, c client.Client, ns, controller string, procs []*operatorProc, when string) time.Duration {
	t.Helper()
	start := time.Now()
	matched := 0
	var diff string
	for time.Since(start) < 30*time.Second {
		want := conditionCounts(t, c, ns, controller)
		got := gaugeCounts(t, controller, procs)
		if diff = cmp.Diff(want, got); diff == "" && want["Ready/True"]+want["Ready/False"]+want["Ready/Unknown"] > 0 {
			if matched++; matched == 2 {
				t.Logf("%s %s: the gauges equal the conditions (%s) after %v", controller, when, brief(want), time.Since(start).Round(100*time.Millisecond))
				return time.Since(start)
			}
		} else {
			matched = 0
		}
		time.Sleep(time.Second)
	}
	t.Errorf("%s %s: kopgo_objects differs from the objects' conditions after 30s (-conditions +gauges):\n%s", controller, when, diff)
	return 0
}

func brief(counts map[string]float64) string {
	return fmt.Sprintf("Ready %v/%v/%v, Reconciling %v, Stalled %v",
		counts["Ready/True"], counts["Ready/False"], counts["Ready/Unknown"], counts["Reconciling/True"], counts["Stalled/True"])
}

// handoverAndRestart gives the healthy controller unhealthy objects too,
// then kills its leader (SIGKILL: the standby takes over when the lease
// runs out) and checks the new leader's gauges, then stops that one
// (SIGTERM) and starts a fresh replica, and checks its gauges.
func handoverAndRestart(t *testing.T, mon *monitor, cluster *testkit.Cluster, ns string, replicas []*operatorProc) {
	t.Helper()
	c := cluster.Client()
	const controller = "ops-healthy"
	for i := range 2 {
		mk(t, c, ns, controller, fmt.Sprint("late-invalid-", i), 0, faultStall, nil)
	}
	mk(t, c, ns, controller, "late-never-ready", 1, faultNotReady, nil)
	waitGaugesMatch(t, c, ns, controller, replicas, "with Stalled and not-Ready objects")
	if want := conditionCounts(t, c, ns, controller); want["Stalled/True"] != 2 || want["Ready/False"]+want["Ready/Unknown"] < 3 {
		t.Fatalf("the healthy controller's late objects are not as meant: %s", brief(want))
	}

	leader, standby := replicas[0], replicas[1]
	if v, _ := sum(scrapeNow(t, standby), "leader_election_master_status", "name", controller); v == 1 {
		leader, standby = standby, leader
	}
	if _, n := sum(scrapeNow(t, standby), "kopgo_objects", "controller", controller); n != 0 {
		t.Errorf("standby %s serves %d kopgo_objects series before it leads; want none", standby.instance, n)
	}
	killed := time.Now()
	leader.stop(syscall.SIGKILL)
	took := waitLeader(t, standby, controller, 30*time.Second)
	t.Logf("leader %s killed; %s leads %v later", leader.instance, standby.instance, took.Round(100*time.Millisecond))
	waitGaugesMatch(t, c, ns, controller, []*operatorProc{standby}, "after a leader handover")
	t.Logf("handover: gauges right %v after the kill", time.Since(killed).Round(100*time.Millisecond))

	standby.stop(syscall.SIGTERM)
	restarted := time.Now()
	fresh := startOperator(t, mon, cluster, ns, controller, controller+"-c", procOptions{lease: "8s/6s/1s"})
	waitLeader(t, fresh, controller, 30*time.Second)
	waitGaugesMatch(t, c, ns, controller, []*operatorProc{fresh}, "after a restart")
	t.Logf("restart: gauges right %v after the stop", time.Since(restarted).Round(100*time.Millisecond))
}

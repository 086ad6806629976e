package ops_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/ops"
)

// ruleCase is a history of series, in promqltest's load syntax, and the
// alerts a rule must have firing when evaluated every
// ops.EvalInterval from 0 to until.
type ruleCase struct {
	name  string
	load  string
	until time.Duration
	// firing is the value of key label of each alert that fires; nil:
	// none fires.
	firing []string
}

// objects renders the object-health series of controller web as kopgo
// serves them, with objects not Ready and Stalled for the given ages, as
// series constant for an hour at a 1m step.
func objects(t *testing.T, notReady, stalled []time.Duration, ready int) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := observability.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	at := func(age time.Duration) metav1.Time { return metav1.NewTime(now.Add(-age)) }
	n := 0
	obj := func(conds ...metav1.Condition) {
		n++
		m.ObserveObject("web", types.NamespacedName{Namespace: "default", Name: fmt.Sprint("o", n)}, types.UID(fmt.Sprint(n)), conds)
	}
	for _, age := range notReady {
		obj(metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, LastTransitionTime: at(age)},
			metav1.Condition{Type: "Reconciling", Status: metav1.ConditionTrue, LastTransitionTime: at(age)})
	}
	for _, age := range stalled {
		obj(metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, LastTransitionTime: at(age)},
			metav1.Condition{Type: "Stalled", Status: metav1.ConditionTrue, LastTransitionTime: at(age)})
	}
	for range ready {
		obj(metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, LastTransitionTime: at(time.Hour)})
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "kopgo_objects") || strings.HasSuffix(mf.GetName(), "_timestamp_seconds") {
			continue
		}
		for _, s := range mf.GetMetric() {
			var ls []string
			for _, l := range s.GetLabel() {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			fmt.Fprintf(&b, "  %s{%s} %v+0x60\n", mf.GetName(), strings.Join(ls, ","), s.GetGauge().GetValue())
		}
	}
	return b.String()
}

// ruleCases are each alert's cases: at its threshold it fires, below it
// stays silent.
func ruleCases(t *testing.T) map[string][]ruleCase {
	t.Helper()
	const (
		reconciles = `kopgo_reconcile_total{controller="web",result="success"} 0+%dx60` + "\n"
		errs       = `kopgo_reconcile_errors_total{controller="web",error_kind="unavailable"} 0+%dx60` + "\n"
	)
	const (
		calls  = `kopgo_external_requests_total{controller="dns",operation="create",outcome="success"} 0+%dx60` + "\n"
		failed = `kopgo_external_requests_total{controller="dns",operation="create",outcome="unavailable"} 0+%dx60` + "\n"
		others = `kopgo_external_requests_total{controller="dns",operation="observe",outcome="success"} 0+1000x60` + "\n"
	)
	return map[string][]ruleCase{
		"KopgoExternalCallsFailing": {
			// 11 of 100 creates fail; the observes that all succeed do not
			// dilute the ratio, which is per operation.
			{"11% of creates fail", "load 1m\n  " + fmt.Sprintf(calls, 89) + "  " + fmt.Sprintf(failed, 11) + "  " + others, 30 * time.Minute, []string{"dns/create/unavailable"}},
			{"10% of creates fail", "load 1m\n  " + fmt.Sprintf(calls, 90) + "  " + fmt.Sprintf(failed, 10) + "  " + others, 30 * time.Minute, nil},
			{"11% fail, for 14m", "load 1m\n  " + fmt.Sprintf(calls, 89) + "  " + fmt.Sprintf(failed, 11), 15 * time.Minute, nil},
			{"no call fails", "load 1m\n  " + fmt.Sprintf(calls, 100) + "  " + others, 30 * time.Minute, nil},
		},
		"KopgoObjectsStalled": {
			{"stalled past 5m", "load 1m\n" + objects(t, nil, []time.Duration{5*time.Minute + 10*time.Second, time.Minute}, 3), time.Minute, []string{"web"}},
			{"stalled under 5m", "load 1m\n" + objects(t, []time.Duration{time.Hour}, []time.Duration{4*time.Minute + 50*time.Second}, 3), 10 * time.Minute, nil},
		},
		"KopgoObjectsNotReady": {
			{"not Ready past 15m", "load 1m\n" + objects(t, []time.Duration{15*time.Minute + 10*time.Second}, nil, 3), time.Minute, []string{"web"}},
			{"stalled past 15m", "load 1m\n" + objects(t, nil, []time.Duration{time.Hour}, 3), time.Minute, []string{"web"}},
			{"not Ready under 15m", "load 1m\n" + objects(t, []time.Duration{14*time.Minute + 50*time.Second, time.Minute}, nil, 3), 10 * time.Minute, nil},
		},
		"KopgoReconcileErrors": {
			{"11% fail", "load 1m\n  " + fmt.Sprintf(reconciles, 100) + "  " + fmt.Sprintf(errs, 11), 30 * time.Minute, []string{"web/unavailable"}},
			{"10% fail", "load 1m\n  " + fmt.Sprintf(reconciles, 100) + "  " + fmt.Sprintf(errs, 10), 30 * time.Minute, nil},
			{"11% fail, for 14m", "load 1m\n  " + fmt.Sprintf(reconciles, 100) + "  " + fmt.Sprintf(errs, 11), 15 * time.Minute, nil},
		},
		"KopgoHotLoop": {
			// 10 objects; 66 reconciles a minute is 0.11 per object and second.
			{"0.11/s per object", "load 1m\n" + objects(t, nil, nil, 10) + "  " + fmt.Sprintf(reconciles, 66), 30 * time.Minute, []string{"web"}},
			{"0.1/s per object", "load 1m\n" + objects(t, nil, nil, 10) + "  " + fmt.Sprintf(reconciles, 60), 30 * time.Minute, nil},
		},
		"KopgoWorkqueueBacklogGrowing": {
			{"above 100 and growing", "load 1m\n" + `  workqueue_depth{controller="web",name="web"} 101+1x60`, 30 * time.Minute, []string{"web"}},
			{"growing to 100", "load 1m\n" + `  workqueue_depth{controller="web",name="web"} 70+1x30`, 30 * time.Minute, nil},
			{"above 100, steady", "load 1m\n" + `  workqueue_depth{controller="web",name="web"} 500+0x60`, 30 * time.Minute, nil},
		},
		"KopgoNoLeader": {
			{"no replica leads", "load 1m\n" + `  leader_election_master_status{name="web-lock",instance="a"} 0+0x60` + "\n" +
				`  leader_election_master_status{name="web-lock",instance="b"} 0+0x60`, 10 * time.Minute, []string{"web-lock"}},
			{"one replica leads", "load 1m\n" + `  leader_election_master_status{name="web-lock",instance="a"} 0+0x60` + "\n" +
				`  leader_election_master_status{name="web-lock",instance="b"} 1+0x60`, 10 * time.Minute, nil},
			{"no leader for 4m", "load 1m\n" + `  leader_election_master_status{name="web-lock",instance="a"} 0+0x60`, 4 * time.Minute, nil},
		},
		"KopgoControllerStuck": {
			{"work waits, no reconcile", "load 1m\n" + `  workqueue_depth{controller="web",name="web"} 5+0x60` + "\n" +
				`  controller_runtime_reconcile_total{controller="web",result="success"} 0+0x60`, 20 * time.Minute, []string{"web"}},
			{"work waits, reconciles go on", "load 1m\n" + `  workqueue_depth{controller="web",name="web"} 5+0x60` + "\n" +
				`  controller_runtime_reconcile_total{controller="web",result="success"} 0+1x60`, 20 * time.Minute, nil},
			{"no work", "load 1m\n" + `  workqueue_depth{controller="web",name="web"} 0+0x60` + "\n" +
				`  controller_runtime_reconcile_total{controller="web",result="success"} 0+0x60`, 20 * time.Minute, nil},
		},
	}
}

// Every alert, evaluated by Prometheus's rule engine over synthetic
// series: it fires at its threshold and stays silent below.
func TestAlerts(t *testing.T) {
	cases := ruleCases(t)
	for _, a := range ops.Alerts() {
		t.Run(a.Name, func(t *testing.T) {
			if len(cases[a.Name]) < 2 {
				t.Fatalf("alert %s has %d cases; want one that fires and one that does not", a.Name, len(cases[a.Name]))
			}
			for _, c := range cases[a.Name] {
				t.Run(c.name, func(t *testing.T) {
					got := evaluate(t, a, c)
					if diff := cmp.Diff(c.firing, got); diff != "" {
						t.Errorf("firing alerts (-want +got):\n%s", diff)
					}
				})
			}
		})
	}
	for name := range cases {
		if !slices.ContainsFunc(ops.Alerts(), func(a ops.Alert) bool { return a.Name == name }) {
			t.Errorf("cases for %s, which is no alert", name)
		}
	}
}

// evaluate runs a's rule over c's series as Prometheus's rule manager
// does, every ops.EvalInterval, and returns the alerts firing at the end
// by their controller (and error_kind, or operation and outcome) or lease
// name.
func evaluate(t *testing.T, a ops.Alert, c ruleCase) []string {
	t.Helper()
	storage := promqltest.LoadedStorage(t, c.load)
	engine := promqltest.NewTestEngine(t, false, 5*time.Minute, promqltest.DefaultMaxSamplesPerQuery)
	expr, err := parser.NewParser(promqltest.TestParserOpts).ParseExpr(a.Expr)
	if err != nil {
		t.Fatalf("parse %s: %v", a.Name, err)
	}
	rule := rules.NewAlertingRule(a.Name, expr, a.For, 0, labels.FromStrings("severity", a.Severity),
		labels.EmptyLabels(), labels.EmptyLabels(), "", true, nil)
	query := rules.EngineQueryFunc(engine, storage)
	for ts := time.Duration(0); ts <= c.until; ts += ops.EvalInterval {
		if _, err := rule.Eval(t.Context(), 0, time.Unix(0, 0).Add(ts), query, nil, 0); err != nil {
			t.Fatalf("evaluate %s at %v: %v", a.Name, ts, err)
		}
	}
	var firing []string
	for _, al := range rule.ActiveAlerts() {
		if al.State != rules.StateFiring {
			continue
		}
		id := al.Labels.Get("controller")
		if k := al.Labels.Get("error_kind"); k != "" {
			id += "/" + k
		}
		if op := al.Labels.Get("operation"); op != "" {
			id += "/" + op + "/" + al.Labels.Get("outcome")
		}
		if id == "" {
			id = al.Labels.Get("name")
		}
		firing = append(firing, id)
	}
	slices.Sort(firing)
	return firing
}

// The committed rules file is one Prometheus loads: rulefmt validates
// its expressions, durations and annotation templates.
func TestRulesFileLoads(t *testing.T) {
	files, err := ops.Files()
	if err != nil {
		t.Fatal(err)
	}
	groups, errs := rulefmt.Parse(files["manifests/rules.yaml"], false, model.UTF8Validation, parser.NewParser(parser.Options{}), nil)
	if len(errs) > 0 {
		t.Fatalf("rules file: %v", errs)
	}
	var names []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			names = append(names, r.Alert)
			if !strings.HasPrefix(r.Annotations["runbook_url"], ops.RunbookURL+"#kopgo") {
				t.Errorf("%s: runbook_url %q", r.Alert, r.Annotations["runbook_url"])
			}
		}
	}
	var want []string
	for _, a := range ops.Alerts() {
		want = append(want, a.Name)
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("alerts in the rules file (-want +got):\n%s", diff)
	}
}

// Every alert has its section in the runbook its runbook_url points at.
func TestRunbookHasEveryAlert(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ops.Alerts() {
		if !strings.Contains(string(doc), "\n### "+a.Name+"\n") {
			t.Errorf("docs/operations.md has no section ### %s", a.Name)
		}
	}
}

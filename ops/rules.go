package ops

import (
	"strconv"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Alert is one alert rule for kopgo operators, with what its runbook
// entry in docs/operations.md is called.
type Alert struct {
	// Name is the alert's name, also the heading of its runbook entry.
	Name string
	// Expr is the PromQL expression; every series it returns is an alert.
	Expr string
	// For is how long Expr must hold before the alert fires; 0: at once.
	For time.Duration
	// Severity is the severity label: "warning" or "critical".
	Severity string
	// Summary and Description are the annotations; Description may use
	// the alert's labels ({{ $labels.controller }}) and value ({{ $value }}).
	Summary, Description string
}

// The group every alert is in, and how often Prometheus evaluates it.
const (
	GroupName    = "kopgo"
	EvalInterval = 30 * time.Second
)

// Alerts returns kopgo's alert rules. The expressions use kopgo's metrics
// (github.com/kopgo/kopgo/observability) and controller-runtime's; every
// alert names the controller, or for KopgoNoLeader the lease, it is about.
// KopgoExternalCallsFailing reads kopgo_external_requests_total, which the
// external package's calls count (outcome success or the error's kind).
func Alerts() []Alert {
	return []Alert{{
		Name:     "KopgoObjectsStalled",
		Expr:     `max by (controller) (kopgo_objects_stalled_longer_than{longer_than="5m"}) > 0`,
		Severity: "warning",
		Summary:  "Objects of controller {{ $labels.controller }} are Stalled",
		Description: "{{ $value }} objects of controller {{ $labels.controller }} have been Stalled=True for more than 5 minutes: " +
			"the controller cannot make progress until their spec or something they depend on changes.",
	}, {
		Name:        "KopgoObjectsNotReady",
		Expr:        `max by (controller) (kopgo_objects_not_ready_longer_than{longer_than="15m"}) > 0`,
		Severity:    "warning",
		Summary:     "Objects of controller {{ $labels.controller }} have not been Ready for 15 minutes",
		Description: "{{ $value }} objects of controller {{ $labels.controller }} have had Ready False or Unknown for more than 15 minutes.",
	}, {
		Name: "KopgoReconcileErrors",
		Expr: `sum by (controller, error_kind) (rate(kopgo_reconcile_errors_total[10m]))` +
			` / on (controller) group_left () sum by (controller) (rate(kopgo_reconcile_total[10m])) > 0.1`,
		For:      15 * time.Minute,
		Severity: "warning",
		Summary:  "Reconciles of controller {{ $labels.controller }} fail with {{ $labels.error_kind }}",
		Description: "{{ $value | humanizePercentage }} of the reconciles of controller {{ $labels.controller }} " +
			"failed with error kind {{ $labels.error_kind }} over the last 10 minutes, for 15 minutes.",
	}, {
		Name: "KopgoHotLoop",
		Expr: `sum by (controller) (rate(kopgo_reconcile_total[10m]))` +
			` / clamp_min(sum by (controller) (kopgo_objects{condition="Ready"}), 1) > 0.1`,
		For:      15 * time.Minute,
		Severity: "warning",
		Summary:  "Controller {{ $labels.controller }} reconciles its objects in a loop",
		Description: "Controller {{ $labels.controller }} reconciles each of its objects {{ $value | humanize }} times a second on average, " +
			"more than once every 10 seconds, for 15 minutes: something changes the objects (or their children) on every reconcile, or it requeues at once.",
	}, {
		Name:     "KopgoWorkqueueBacklogGrowing",
		Expr:     `sum by (controller) (workqueue_depth) > 100 and sum by (controller) (deriv(workqueue_depth[10m])) > 0`,
		For:      15 * time.Minute,
		Severity: "warning",
		Summary:  "The work queue of controller {{ $labels.controller }} grows",
		Description: "{{ $value }} objects wait in the work queue of controller {{ $labels.controller }}, " +
			"and the backlog has grown for 15 minutes: the controller does not keep up.",
	}, {
		Name:        "KopgoNoLeader",
		Expr:        `max by (name) (leader_election_master_status) < 1`,
		For:         5 * time.Minute,
		Severity:    "critical",
		Summary:     "No replica leads {{ $labels.name }}",
		Description: "No replica of the operator holding lease {{ $labels.name }} has been leader for 5 minutes: nothing is reconciled.",
	}, {
		Name: "KopgoControllerStuck",
		Expr: `sum by (controller) (workqueue_depth) > 0` +
			` unless on (controller) sum by (controller) (rate(controller_runtime_reconcile_total[10m])) > 0`,
		For:      10 * time.Minute,
		Severity: "critical",
		Summary:  "Controller {{ $labels.controller }} reconciles nothing while work waits",
		Description: "{{ $value }} objects wait in the work queue of controller {{ $labels.controller }} and it has not reconciled any for 10 minutes: " +
			"its caches have not synced, or every worker is stuck.",
	}, {
		Name: "KopgoExternalCallsFailing",
		Expr: `sum by (controller, operation, outcome) (rate(kopgo_external_requests_total{outcome!="success"}[10m]))` +
			` / on (controller, operation) group_left () sum by (controller, operation) (rate(kopgo_external_requests_total[10m])) > 0.1`,
		For:      15 * time.Minute,
		Severity: "warning",
		Summary:  "Calls of controller {{ $labels.controller }} to its external system fail",
		Description: "{{ $value | humanizePercentage }} of the {{ $labels.operation }} calls of controller {{ $labels.controller }} " +
			"to the external system failed with {{ $labels.outcome }} over the last 10 minutes, for 15 minutes.",
	}}
}

// RuleGroup returns the alerts as a rule group, the form both a Prometheus
// rules file and a PrometheusRule hold.
func RuleGroup() monitoringv1.RuleGroup {
	interval := monitoringv1.Duration(promDuration(EvalInterval))
	g := monitoringv1.RuleGroup{Name: GroupName, Interval: &interval}
	for _, a := range Alerts() {
		r := monitoringv1.Rule{
			Alert:  a.Name,
			Expr:   intstr.FromString(a.Expr),
			Labels: map[string]string{"severity": a.Severity},
			Annotations: map[string]string{
				"summary":     a.Summary,
				"description": a.Description,
				"runbook_url": RunbookURL + "#" + anchor(a.Name),
			},
		}
		if a.For > 0 {
			d := monitoringv1.Duration(promDuration(a.For))
			r.For = &d
		}
		g.Rules = append(g.Rules, r)
	}
	return g
}

// RunbookURL is the runbook the alerts link to, one section per alert.
const RunbookURL = "https://github.com/kopgo/kopgo/blob/main/docs/operations.md"

// RulesFile is the content of a Prometheus rules file
// (rule_files in prometheus.yml).
type RulesFile struct {
	Groups []monitoringv1.RuleGroup `json:"groups"`
}

// PrometheusRule returns the alerts as a prometheus-operator
// PrometheusRule named name in namespace, labelled with labels (a
// Prometheus's ruleSelector picks PrometheusRules by label).
func PrometheusRule(namespace, name string, labels map[string]string) *monitoringv1.PrometheusRule {
	return &monitoringv1.PrometheusRule{
		TypeMeta:   metav1.TypeMeta{APIVersion: monitoringv1.SchemeGroupVersion.String(), Kind: monitoringv1.PrometheusRuleKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec:       monitoringv1.PrometheusRuleSpec{Groups: []monitoringv1.RuleGroup{RuleGroup()}},
	}
}

// promDuration renders d as Prometheus writes durations ("15m", "30s").
func promDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	case d%time.Minute == 0:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	}
	return strconv.Itoa(int(d/time.Second)) + "s"
}

// anchor is the GitHub anchor of a Markdown heading.
func anchor(heading string) string {
	b := make([]byte, 0, len(heading))
	for _, r := range heading {
		switch {
		case r >= 'A' && r <= 'Z':
			b = append(b, byte(r-'A'+'a'))
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b = append(b, byte(r))
		case r == ' ':
			b = append(b, '-')
		}
	}
	return string(b)
}

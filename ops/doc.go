// Package ops is the operations kit of operators built with kopgo: the
// alert rules, the Grafana dashboard, and the ServiceMonitor and RBAC
// that Prometheus needs to scrape an operator, defined in Go and rendered
// into the files committed next to them (manifests/ and dashboards/;
// `make generate` writes them).
//
// It is a module of its own (github.com/kopgo/kopgo/ops), so that the
// library's users never download the Prometheus server, the
// prometheus-operator API or the Grafana SDK; only this module and its
// tests need them.
//
// # Alerts
//
// [Alerts] lists the rules; [RuleGroup] and [PrometheusRule] render them
// for a Prometheus rules file and for prometheus-operator. Each is tested
// with Prometheus's own rule engine over synthetic series: it fires at
// its threshold and stays silent below. docs/operations.md is the
// runbook, one section per alert.
//
// # Dashboard
//
// [Dashboard] builds the Grafana dashboard from [Rows] with the Grafana
// Foundation SDK: object health (Ready, Reconciling, Stalled, and for how
// long), reconciles by result, errors by kind, durations, the work queue,
// applies, garbage collection, API requests and leadership.
//
// # Scraping
//
// kopgo serves metrics over HTTPS and lets only callers the API server
// authorizes for GET /metrics read them. [ServiceMonitor] scrapes with
// Prometheus's service account token; [MetricsRBAC] grants that account
// the metrics-reader ClusterRole. Call both with a [Scrape] of your own to
// render them for your operator, or edit the committed ones.
package ops

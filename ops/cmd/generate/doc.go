// Command generate writes the operations kit's generated files (alert
// rules, PrometheusRule, ServiceMonitor, metrics RBAC, Grafana dashboard)
// under the directory given by -dir, the ops module's root by default.
// `make generate` runs it.
package main

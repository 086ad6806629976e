package ops

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// DashboardUID is the dashboard's uid: a Grafana URL to it stays the same
// across imports.
const DashboardUID = "kopgo-operator"

// Row is a row of the dashboard.
type Row struct {
	Title  string
	Panels []Panel
}

// Panel is one panel: a time series, or a stat showing the last value.
type Panel struct {
	Title, Description string
	Stat               bool
	Unit               string // Grafana unit: "short", "s", "reqps", "percentunit"
	Queries            []Query
}

// Query is one PromQL query of a panel. $controller is the dashboard's
// controller variable, $__rate_interval Grafana's rate window.
type Query struct {
	Expr, Legend string
}

// sel is the label matcher of the controller variable.
const sel = `controller=~"$controller"`

// Rows returns the dashboard's content: object health first (the
// on-call's first question), then reconciles, the work queue, writes,
// external calls and leadership.
func Rows() []Row {
	return []Row{{
		Title: "Objects",
		Panels: []Panel{{
			Title: "Objects", Stat: true, Unit: "short",
			Description: "Objects the controller has reconciled and holds (kopgo_objects).",
			Queries:     []Query{{`sum by (controller) (kopgo_objects{` + sel + `, condition="Ready"})`, "{{controller}}"}},
		}, {
			Title: "Not Ready", Stat: true, Unit: "short",
			Description: "Objects whose Ready condition is False or Unknown.",
			Queries:     []Query{{`sum by (controller) (kopgo_objects{` + sel + `, condition="Ready", status!="True"})`, "{{controller}}"}},
		}, {
			Title: "Stalled", Stat: true, Unit: "short",
			Description: "Objects with Stalled=True: nothing happens until something changes.",
			Queries:     []Query{{`sum by (controller) (kopgo_objects{` + sel + `, condition="Stalled", status="True"})`, "{{controller}}"}},
		}, {
			Title: "Longest not Ready", Stat: true, Unit: "s",
			Description: "How long the object not Ready the longest has not been Ready.",
			Queries:     []Query{{`time() - min by (controller) (kopgo_objects_oldest_not_ready_timestamp_seconds{` + sel + `})`, "{{controller}}"}},
		}, {
			Title: "Objects by Ready status", Unit: "short",
			Queries: []Query{{`sum by (controller, status) (kopgo_objects{` + sel + `, condition="Ready"})`, "{{controller}} Ready={{status}}"}},
		}, {
			Title: "Reconciling and Stalled", Unit: "short",
			Queries: []Query{{`sum by (controller, condition) (kopgo_objects{` + sel + `, condition=~"Reconciling|Stalled", status="True"})`, "{{controller}} {{condition}}"}},
		}, {
			Title: "Not Ready for longer than", Unit: "short",
			Description: "Objects not Ready for longer than each threshold (kopgo_objects_not_ready_longer_than).",
			Queries:     []Query{{`sum by (controller, longer_than) (kopgo_objects_not_ready_longer_than{` + sel + `})`, "{{controller}} > {{longer_than}}"}},
		}, {
			Title: "Stalled for longer than", Unit: "short",
			Queries: []Query{{`sum by (controller, longer_than) (kopgo_objects_stalled_longer_than{` + sel + `})`, "{{controller}} > {{longer_than}}"}},
		}},
	}, {
		Title: "Reconciles",
		Panels: []Panel{{
			Title: "Reconciles by result", Unit: "reqps",
			Queries: []Query{{`sum by (controller, result) (rate(kopgo_reconcile_total{` + sel + `}[$__rate_interval]))`, "{{controller}} {{result}}"}},
		}, {
			Title: "Errors by kind", Unit: "reqps",
			Queries: []Query{{`sum by (controller, error_kind) (rate(kopgo_reconcile_errors_total{` + sel + `}[$__rate_interval]))`, "{{controller}} {{error_kind}}"}},
		}, {
			Title: "Reconcile duration", Unit: "s",
			Queries: []Query{
				{`histogram_quantile(0.5, sum by (controller, le) (rate(kopgo_reconcile_duration_seconds_bucket{` + sel + `}[$__rate_interval])))`, "{{controller}} p50"},
				{`histogram_quantile(0.99, sum by (controller, le) (rate(kopgo_reconcile_duration_seconds_bucket{` + sel + `}[$__rate_interval])))`, "{{controller}} p99"},
			},
		}, {
			Title: "Deferred for the cache", Unit: "reqps",
			Description: "Reconciles put off because the cache held the object older than the operator's last write to it (deferred), and those run anyway after the bounded wait (expired).",
			Queries:     []Query{{`sum by (controller, outcome) (rate(kopgo_reconcile_deferred_total{` + sel + `}[$__rate_interval]))`, "{{controller}} {{outcome}}"}},
		}, {
			Title: "Reconciles per object", Unit: "reqps",
			Description: "Reconciles a second per object held; KopgoHotLoop fires above 0.1.",
			Queries: []Query{{`sum by (controller) (rate(kopgo_reconcile_total{` + sel + `}[$__rate_interval]))` +
				` / clamp_min(sum by (controller) (kopgo_objects{` + sel + `, condition="Ready"}), 1)`, "{{controller}}"}},
		}},
	}, {
		Title: "Work queue",
		Panels: []Panel{{
			Title: "Depth", Unit: "short",
			Queries: []Query{{`sum by (controller) (workqueue_depth{` + sel + `})`, "{{controller}}"}},
		}, {
			Title: "Time in queue", Unit: "s",
			Queries: []Query{{`histogram_quantile(0.99, sum by (controller, le) (rate(workqueue_queue_duration_seconds_bucket{` + sel + `}[$__rate_interval])))`, "{{controller}} p99"}},
		}, {
			Title: "Adds and retries", Unit: "reqps",
			Queries: []Query{
				{`sum by (controller) (rate(workqueue_adds_total{` + sel + `}[$__rate_interval]))`, "{{controller}} adds"},
				{`sum by (controller) (rate(workqueue_retries_total{` + sel + `}[$__rate_interval]))`, "{{controller}} retries"},
			},
		}, {
			Title: "Busy workers", Unit: "short",
			Queries: []Query{
				{`sum by (controller) (controller_runtime_active_workers{` + sel + `})`, "{{controller}} busy"},
				{`sum by (controller) (controller_runtime_max_concurrent_reconciles{` + sel + `})`, "{{controller}} max"},
			},
		}},
	}, {
		Title: "Writes",
		Panels: []Panel{{
			Title: "Applies by outcome", Unit: "reqps",
			Queries: []Query{{`sum by (controller, outcome) (rate(kopgo_apply_total{` + sel + `}[$__rate_interval]))`, "{{controller}} {{outcome}}"}},
		}, {
			Title: "Garbage collected", Unit: "reqps",
			Queries: []Query{{`sum by (controller) (rate(kopgo_gc_deletions_total{` + sel + `}[$__rate_interval]))`, "{{controller}}"}},
		}, {
			Title: "API requests by code", Unit: "reqps",
			Description: "Requests of the operator's clients to the API server.",
			Queries:     []Query{{`sum by (code, method) (rate(rest_client_requests_total[$__rate_interval]))`, "{{method}} {{code}}"}},
		}},
	}, {
		Title: "External calls",
		Panels: []Panel{{
			Title: "External calls by outcome", Unit: "reqps",
			Description: "Calls to the system outside the cluster by operation and outcome (success, or the error's kind); KopgoExternalCallsFailing fires when more than 10% fail.",
			Queries:     []Query{{`sum by (controller, operation, outcome) (rate(kopgo_external_requests_total{` + sel + `}[$__rate_interval]))`, "{{controller}} {{operation}} {{outcome}}"}},
		}, {
			Title: "External call duration", Unit: "s",
			Queries: []Query{
				{`histogram_quantile(0.5, sum by (controller, operation, le) (rate(kopgo_external_request_duration_seconds_bucket{` + sel + `}[$__rate_interval])))`, "{{controller}} {{operation}} p50"},
				{`histogram_quantile(0.99, sum by (controller, operation, le) (rate(kopgo_external_request_duration_seconds_bucket{` + sel + `}[$__rate_interval])))`, "{{controller}} {{operation}} p99"},
			},
		}},
	}, {
		Title: "Leadership",
		Panels: []Panel{{
			Title: "Leader", Unit: "short",
			Description: "1 on the replica that leads, 0 on standbys.",
			Queries:     []Query{{`leader_election_master_status`, "{{name}} {{instance}}"}},
		}},
	}}
}

// Dashboard builds the Grafana dashboard of [Rows], with a Prometheus
// data source variable and a controller variable. It is the classic
// dashboard JSON model (schemaVersion 42), the one every Grafana imports,
// as do the grafana-operator and the dashboard sidecar of Grafana's Helm
// chart; the SDK's dashboardv2 needs Grafana 12 with its new layouts.
func Dashboard() (dashboard.Dashboard, error) { //nolint:staticcheck // the classic dashboard JSON model, which every Grafana and the grafana-operator and sidecar import; dashboardv2 needs Grafana 12 with its new layouts
	ds := common.DataSourceRef{Type: new("prometheus"), Uid: new("${datasource}")}
	//nolint:staticcheck // the classic model, see above
	b := dashboard.NewDashboardBuilder("kopgo operator").
		Uid(DashboardUID).
		Description("Object health, reconciles, work queue, writes and leadership of operators built with kopgo.").
		Tags([]string{"kopgo", "kubernetes", "operator"}).
		Refresh("30s").
		Time("now-3h", "now").
		Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus")).
		WithVariable(dashboard.NewQueryVariableBuilder("controller").
			Label("Controller").
			Datasource(ds).
			Query(dashboard.StringOrMap{String: new("label_values(kopgo_reconcile_total, controller)")}).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Multi(true).IncludeAll(true).AllValue(".*"))
	// Rows stay open: their panels follow them at the top level, as
	// Grafana keeps the panels of an expanded row.
	for _, r := range Rows() {
		b = b.WithRow(dashboard.NewRowBuilder(r.Title))
		for _, p := range r.Panels {
			b = b.WithPanel(panel(p, ds))
		}
	}
	return b.Build()
}

func panel(p Panel, ds common.DataSourceRef) cog.Builder[dashboard.Panel] {
	targets := make([]*prometheus.DataqueryBuilder, len(p.Queries))
	for i, q := range p.Queries {
		targets[i] = prometheus.NewDataqueryBuilder().Expr(q.Expr).LegendFormat(q.Legend).RefId(string(rune('A' + i)))
	}
	if p.Stat {
		s := stat.NewPanelBuilder().Title(p.Title).Unit(p.Unit).Datasource(ds).Span(6).Height(4)
		if p.Description != "" {
			s = s.Description(p.Description)
		}
		for _, t := range targets {
			s = s.WithTarget(t)
		}
		return s
	}
	ts := timeseries.NewPanelBuilder().Title(p.Title).Unit(p.Unit).Datasource(ds).Span(12).Height(8).Min(0)
	if p.Description != "" {
		ts = ts.Description(p.Description)
	}
	for _, t := range targets {
		ts = ts.WithTarget(t)
	}
	return ts
}

package ops_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/kopgo/kopgo/ops"
)

// The committed dashboard loads into the SDK's types (Grafana's schema),
// validates, and encodes back to the same JSON.
func TestDashboardRoundTrips(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	raw, err := os.ReadFile(filepath.Join("dashboards", "kopgo.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard.Dashboard //nolint:staticcheck // the model ops.Dashboard builds, see there
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("decode dashboard: %v", err)
	}
	if err := d.Validate(); err != nil {
		t.Errorf("validate: %v", err)
	}
	var again bytes.Buffer
	enc := json.NewEncoder(&again)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, again.Bytes()) {
		t.Errorf("the dashboard does not survive a decode and an encode")
	}
	got := 0
	for _, exprs := range dashboardQueries(t, d) {
		got += len(exprs)
	}
	if want := queryCount(); got != want {
		t.Errorf("dashboard holds %d queries; Rows defines %d", got, want)
	}
}

// Every panel's query parses as PromQL once Grafana has put in its
// variables, and names only metrics kopgo or controller-runtime serve.
func TestDashboardQueries(t *testing.T) {
	d, err := ops.Dashboard()
	if err != nil {
		t.Fatal(err)
	}
	known := servedMetrics(t)
	for title, exprs := range dashboardQueries(t, d) {
		for _, expr := range exprs {
			e := strings.NewReplacer("$__rate_interval", "1m", "$controller", ".*").Replace(expr)
			parsed, err := parser.NewParser(parser.Options{}).ParseExpr(e)
			if err != nil {
				t.Errorf("panel %q: %s: %v", title, expr, err)
				continue
			}
			for _, name := range metricNames(parsed) {
				if !known[name] {
					t.Errorf("panel %q: metric %s is served by neither kopgo nor controller-runtime", title, name)
				}
			}
		}
	}
}

// dashboardQueries returns the PromQL of every panel of d, by title.
func dashboardQueries(t *testing.T, d dashboard.Dashboard) map[string][]string { //nolint:staticcheck // the model ops.Dashboard builds, see there
	t.Helper()
	out := map[string][]string{}
	for _, p := range d.Panels {
		if p.Panel == nil {
			continue
		}
		title := *p.Panel.Title
		if len(p.Panel.Targets) == 0 {
			t.Errorf("panel %q has no query", title)
		}
		for _, target := range p.Panel.Targets {
			switch q := target.(type) {
			case prometheus.Dataquery: // as built
				out[title] = append(out[title], q.Expr)
			case *prometheus.Dataquery: // as decoded
				out[title] = append(out[title], q.Expr)
			default:
				t.Errorf("panel %q: target %T, want a Prometheus query", title, target)
			}
		}
	}
	return out
}

func queryCount() int {
	n := 0
	for _, r := range ops.Rows() {
		for _, p := range r.Panels {
			n += len(p.Queries)
		}
	}
	return n
}

// The committed files are what the generator makes now: `make generate`
// was run after the last change.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	files, err := ops.Files()
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.FromSlash(path))
		if err != nil {
			t.Errorf("%s: %v (run make generate)", path, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what the generator makes: run make generate", path)
		}
	}
}

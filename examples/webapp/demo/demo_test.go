package demo_test

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap/zapcore"
	rbacv1 "k8s.io/api/rbac/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kopgo/kopgo/examples/webapp"
	"github.com/kopgo/kopgo/examples/webapp/demo"
	"github.com/kopgo/kopgo/examples/webapp/operator"
	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	crds, err := webapp.CRDs()
	if err != nil {
		panic(err)
	}
	testkit.Main(m, testkit.Options{Full: true, Nodes: 2, CRDs: crds, Scheme: operator.Scheme()}, func(c *testkit.Cluster) { cluster = c })
}

// The walkthrough of `make demo`, with the operator running as a user bound
// only to the generated RBAC (config/rbac). Every request the operator sends
// is recorded: a request the API server refuses and a rule the operator
// never uses both fail the test, so the markers stay minimal and complete.
func TestWalkthroughWithGeneratedRBAC(t *testing.T) {
	const user = "webapp-operator-e2e"
	if err := demo.Install(t.Context(), cluster.Client(), user); err != nil {
		t.Fatal(err)
	}
	cfg, err := cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	cfg.Wrap(rec.wrap)

	op, err := demo.StartOperator(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = op.Stop()
		}
	}()
	summary, err := demo.Walkthrough(t.Context(), cluster.Client(), "demo-e2e", testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	counts, err := op.Reconciles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	stopped = true
	if err := op.Stop(); err != nil {
		t.Fatalf("operator: %v", err)
	}
	t.Logf("reconciles: %v; steps: %+v", counts, summary.Steps)
	if counts["success"] == 0 || counts["terminal"] == 0 {
		t.Errorf("reconciles = %v, want successes (the web app) and terminal errors (the broken one)", counts)
	}
	// A terminal error is not retried: the broken WebApp is reconciled on
	// creation and when its finalizer is removed, not in a backoff loop.
	if n := counts["error"]; n > 0 {
		t.Errorf("%d reconciles ended in a retryable error, want 0", n)
	}

	if denied := rec.denied(); len(denied) > 0 {
		t.Errorf("the API server refused the operator (missing RBAC rules):\n  %s", strings.Join(denied, "\n  "))
	}
	cr, role, err := webapp.RBAC()
	if err != nil {
		t.Fatal(err)
	}
	used := rec.used()
	// Checked by admission (OwnerReferencesPermissionEnforcement, on in the
	// testkit) when a controller reference sets blockOwnerDeletion: needed,
	// never requested.
	used["webapp.examples.kopgo.dev/webapps/finalizers update"] = true
	// Sent only when the same event repeats for the same version of an
	// object (client-go then patches the first one into a series): timing
	// decides whether a run does it.
	used["events.k8s.io/events patch"] = true
	var unused []string
	for _, r := range slices.Concat(cr.Rules, role.Rules) {
		for _, perm := range expand(r) {
			if !used[perm] {
				unused = append(unused, perm)
			}
		}
	}
	if len(unused) > 0 {
		t.Errorf("RBAC rules the operator never used (excess permissions): %v\nused: %v", unused, slices.Sorted(maps.Keys(used)))
	}
}

// recorder records the group, resource and verb of every request and
// which of them the API server refused.
type recorder struct {
	mu        sync.Mutex
	requests  map[string]bool // "group/resource verb" -> seen
	forbidden map[string]bool
}

func (r *recorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		perm, ok := permission(req)
		if !ok {
			return resp, err
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.requests == nil {
			r.requests, r.forbidden = map[string]bool{}, map[string]bool{}
		}
		r.requests[perm] = true
		prefix, _, _ := strings.Cut(perm, " ")
		if err == nil && req.Method == http.MethodPatch && resp.StatusCode == http.StatusCreated {
			// A server-side apply that creates: authorized as "create" too.
			r.requests[prefix+" create"] = true
		}
		if req.URL.Query().Get("sendInitialEvents") == "true" {
			// client-go's streaming list (a watch that starts with the
			// current objects) replaces the informer's "list"; servers
			// without it get a list, so the rule stays.
			r.requests[prefix+" list"] = true
		}
		if err == nil && resp.StatusCode == http.StatusForbidden {
			r.forbidden[perm+" "+req.URL.Path] = true
		}
		return resp, err
	})
}

func (r *recorder) used() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]bool{}
	for k := range r.requests {
		out[k] = true
	}
	return out
}

func (r *recorder) denied() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.forbidden))
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// permission is the RBAC permission a resource request needs, as
// "group/resource[/subresource] verb" ("" group for the core API). Discovery
// and other non-resource requests report false.
func permission(req *http.Request) (string, bool) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:] // api/v1/...
	case len(parts) >= 4 && parts[0] == "apis":
		group, parts = parts[1], parts[3:] // apis/group/version/...
	default:
		return "", false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:] // namespaces/<ns>/<resource>...
	}
	resource, named := parts[0], len(parts) >= 2
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	var verb string
	switch req.Method {
	case http.MethodGet:
		switch {
		case named:
			verb = "get"
		case req.URL.Query().Get("watch") == "true":
			verb = "watch"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if !named {
			verb = "deletecollection"
		}
	default:
		return "", false
	}
	return group + "/" + resource + " " + verb, true
}

// expand lists the permissions of one rule in permission's form.
func expand(r rbacv1.PolicyRule) []string {
	var out []string
	for _, g := range r.APIGroups {
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				out = append(out, fmt.Sprintf("%s/%s %s", g, res, v))
			}
		}
	}
	return out
}

// testWriter prints the walkthrough's progress in the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

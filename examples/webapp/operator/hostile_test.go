package operator_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kopgo/kopgo/examples/webapp"
	webappv1 "github.com/kopgo/kopgo/examples/webapp/api/v1alpha1"
	"github.com/kopgo/kopgo/examples/webapp/operator"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit"
)

var (
	cluster *testkit.Cluster
	runs    atomic.Int32 // controller names must differ per run (go test -count)
)

func TestMain(m *testing.M) {
	if fuzzWorker() {
		// A fuzzing worker runs only the fuzz target: no cluster.
		os.Exit(m.Run())
	}
	// Hundreds of bad WebApps are hundreds of error logs and refused
	// events by design; the test reads the outcome from status and metrics.
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	crds, err := webapp.CRDs()
	if err != nil {
		panic(err)
	}
	testkit.Main(m, testkit.Options{CRDs: crds, Scheme: operator.Scheme()}, func(c *testkit.Cluster) { cluster = c })
}

// fuzzWorker reports whether this process is a worker of `go test -fuzz`,
// which runs nothing but the fuzz target (the process that starts the
// workers runs the tests, with the cluster, first).
func fuzzWorker() bool {
	flag.Parse()
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}

// hostileSpecs is the number of WebApps TestHostileSpecs creates:
// $KOPGO_HOSTILE_SPECS, default 200.
func hostileSpecs(t *testing.T) int {
	t.Helper()
	n := 200
	if s := os.Getenv("KOPGO_HOSTILE_SPECS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("KOPGO_HOSTILE_SPECS=%q: want a positive number", s)
		}
	}
	return n
}

// hostileSeed seeds the generator: $KOPGO_HOSTILE_SEED, default 1.
func hostileSeed(t *testing.T) uint64 {
	t.Helper()
	if s := os.Getenv("KOPGO_HOSTILE_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("KOPGO_HOSTILE_SEED=%q: want a number", s)
		}
		return n
	}
	return 1
}

// TestHostileSpecs creates a few hundred WebApps from a seeded generator of
// hostile input (names at and over the length limits, dotted names, huge
// and unicode strings, bad and missing fields, out-of-range numbers, config
// at and over the ConfigMap limits), half of them in a namespace with the
// longest name there is, and runs the operator on them. The generator knows
// what it made: the API server must refuse what the CRD's schema forbids,
// every WebApp it accepts that the operator cannot run must end Stalled
// (Ready=False) with a message naming each bad field, every other one must
// become Ready, and none may make the operator panic. A Stalled WebApp is
// not retried: no request about it once it settled. Finally every WebApp,
// whatever its name, can be deleted: its finalizer's cleanup succeeds.
func TestHostileSpecs(t *testing.T) {
	ctx := t.Context()
	c := cluster.Client()
	label := "hostile-test"
	namespaces := []string{cluster.Namespace(t), longNamespace(t)}
	registry := cluster.Namespace(t)
	name := fmt.Sprintf("webapp-hostile-%d", runs.Add(1))
	traffic := startHostileOperator(t, name, registry, label+"="+namespaces[0])

	rng := rand.New(rand.NewPCG(hostileSeed(t), 0))
	var specs []hostileSpec
	refusals := map[string]int{} // by reason
	for i := range hostileSpecs(t) {
		s := generateWebApp(rng, i, namespaces[i%2])
		s.obj.SetLabels(map[string]string{label: namespaces[0]})
		err := c.Create(ctx, s.obj)
		switch {
		case err == nil && s.refused != "":
			t.Errorf("the API server accepted %s, which the schema forbids (%s)", s, s.refused)
		case err == nil:
			specs = append(specs, s)
		case (apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)) && s.refused == "":
			t.Errorf("the API server refused %s: %v", s, err)
		case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
			refusals[string(apierrors.ReasonForError(err))]++
		default:
			t.Fatalf("create %s: %v", s, err)
		}
	}

	stop := fakeDeploymentController(t, namespaces)
	settled := map[string]bool{}
	var lastWhy map[string]string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		why := map[string]string{}
		for _, s := range specs {
			key := s.obj.GetNamespace() + "/" + s.obj.GetName()
			if settled[key] {
				continue
			}
			var app webappv1.WebApp
			if err := c.Get(ctx, client.ObjectKeyFromObject(s.obj), &app); err != nil {
				return false, err
			}
			ok, reason := s.settled(&app)
			if ok {
				settled[key] = true
				// From now on, nothing about it may be sent.
				traffic.settle(key)
			} else {
				why[key] = reason
			}
		}
		lastWhy = why // a whole pass: a pass cut short by the deadline says nothing
		return len(why) == 0, nil
	})
	stop()
	if err != nil {
		n := 0
		for key, why := range lastWhy {
			if n++; n > 10 {
				break
			}
			t.Errorf("%s: %s", shorten(key), why)
		}
		t.Fatalf("%d of %d WebApps did not settle as expected: %v", len(lastWhy), len(specs), err)
	}

	// A fixed window after every WebApp settled: a Stalled WebApp is not
	// retried, a Ready one is left alone.
	const window = 5 * time.Second
	time.Sleep(window)
	stalled, perBad, after := 0, 0, 0
	maxBad := 0
	for _, s := range specs {
		key := s.obj.GetNamespace() + "/" + s.obj.GetName()
		before, afterSettle, late := traffic.count(key)
		after += afterSettle
		if afterSettle > 0 {
			t.Errorf("%s: %d requests after it settled, want none: %v", shorten(key), afterSettle, late)
		}
		if len(s.want) > 0 {
			stalled++
			perBad += before
			maxBad = max(maxBad, before)
		}
	}
	results := reconcileResults(t, name)
	if results["panic"] > 0 {
		t.Errorf("%d reconciles panicked", results["panic"])
	}
	refused := 0
	for _, n := range refusals {
		refused += n
	}
	t.Logf("%d specs: %d refused by the API server %v, %d stalled, %d converged; reconciles %v",
		refused+len(specs), refused, refusals, stalled, len(specs)-stalled, results)
	if stalled > 0 {
		t.Logf("requests about a stalled WebApp until it settled: mean %.1f, max %d; in the %s after: %d about any WebApp",
			float64(perBad)/float64(stalled), maxBad, window, after)
	}
	if stalled == 0 || stalled == len(specs) || refused == 0 {
		t.Errorf("the generator made no mix: %d refused, %d stalled, %d converged", refused, stalled, len(specs)-stalled)
	}

	// Every WebApp can be deleted: its cleanup (the registry entry, under a
	// field manager derived from namespace and name) succeeds.
	for _, s := range specs {
		if err := c.Delete(ctx, s.obj); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		left := 0
		for _, ns := range namespaces {
			var list webappv1.WebAppList
			if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
				return false, err
			}
			left += len(list.Items)
		}
		return left == 0, nil
	})
	if err != nil {
		for _, ns := range namespaces {
			var list webappv1.WebAppList
			_ = c.List(ctx, &list, client.InNamespace(ns))
			for i, app := range list.Items {
				if i < 5 {
					t.Errorf("WebApp %s/%s not deleted: finalizers %v, status %+v", ns, shorten(app.Name), app.Finalizers, app.Status.Conditions)
				}
			}
		}
		t.Fatalf("WebApps left after deletion: %v", err)
	}
}

// longNamespace creates a namespace with the longest name allowed (63
// characters), deleted when the test ends.
func longNamespace(t *testing.T) string {
	t.Helper()
	prefix := fmt.Sprintf("hostile-%05d-", rand.IntN(100000))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: prefix + strings.Repeat("n", 63-len(prefix))}}
	if err := cluster.Client().Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Client().Delete(context.Background(), ns) })
	return ns.Name
}

// startHostileOperator runs the operator in this process, on WebApps
// matching selector, and counts its requests about each WebApp.
func startHostileOperator(t *testing.T, name, registry, selector string) *objectTraffic {
	t.Helper()
	traffic := &objectTraffic{registry: registry, before: map[string]int{}, after: map[string]int{}, settled: map[string]bool{}, late: map[string][]string{}}
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			traffic.record(r.Method, r.URL)
			return rt.RoundTrip(r)
		})
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	b := operator.New(operator.Options{Name: name, Config: cfg, Namespace: registry, HealthPort: -1, MetricsPort: -1, Selector: selector})
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("operator: %v", err)
		}
	})
	return traffic
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// objectTraffic counts the operator's requests about each WebApp (the
// WebApp, its status, its children), before and after it settled.
type objectTraffic struct {
	registry string
	mu       sync.Mutex
	before   map[string]int // by namespace/name
	after    map[string]int
	settled  map[string]bool
	late     map[string][]string // by namespace/name: the requests after it settled
}

// record counts a request to a WebApp or one of its children by the path
// /apis/<group>/<version>/namespaces/<ns>/<resource>/<name>[/status].
func (o *objectTraffic) record(method string, u *url.URL) {
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	i := slices.Index(parts, "namespaces")
	if i < 0 || len(parts) < i+4 {
		return // not about one object
	}
	ns, resource, name := parts[i+1], parts[i+2], parts[i+3]
	switch resource {
	case "webapps", "deployments", "services":
	case "configmaps":
		if ns == o.registry {
			return // the registry, shared by all
		}
		name = strings.TrimSuffix(name, "-config")
	default:
		return
	}
	key := ns + "/" + name
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.settled[key] {
		o.after[key]++
		o.late[key] = append(o.late[key], method+" "+shorten(u.Path))
	} else {
		o.before[key]++
	}
}

func (o *objectTraffic) settle(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.settled[key] = true
}

func (o *objectTraffic) count(key string) (before, after int, late []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.before[key], o.after[key], o.late[key]
}

// fakeDeploymentController plays the Deployment controller, absent from a
// bare control plane: it reports each Deployment's current generation rolled
// out. It stops when the returned function is called.
func fakeDeploymentController(t *testing.T, namespaces []string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c := cluster.Client()
		for ctx.Err() == nil {
			for _, ns := range namespaces {
				var list appsv1.DeploymentList
				if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
					continue
				}
				for _, d := range list.Items {
					if d.Status.ObservedGeneration == d.Generation {
						continue
					}
					n := int32(1)
					if d.Spec.Replicas != nil {
						n = *d.Spec.Replicas
					}
					d.Status = appsv1.DeploymentStatus{
						ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
						Conditions: []appsv1.DeploymentCondition{
							{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
							{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
						},
					}
					_ = c.Status().Update(ctx, &d) // a conflict is retried on the next pass
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return func() { cancel(); <-done }
}

// reconcileResults reads kopgo_reconcile_total of controller name by result.
func reconcileResults(t *testing.T, name string) map[string]int {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, f := range families {
		if f.GetName() != "kopgo_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["controller"] == name {
				out[labels["result"]] += int(m.GetCounter().GetValue())
			}
		}
	}
	return out
}

// hostileSpec is one generated WebApp and what must become of it.
type hostileSpec struct {
	obj *unstructured.Unstructured
	// refused says why the API server must refuse it ("" if it must not).
	refused string
	// want are the fields the operator must name, Stalled; none: the
	// WebApp must become Ready.
	want []string
	// what describes the choices, for failure messages.
	what []string
}

func (s hostileSpec) String() string {
	return fmt.Sprintf("WebApp %s/%s (%s)", s.obj.GetNamespace(), shorten(s.obj.GetName()), strings.Join(s.what, ", "))
}

// settled reports whether app reached the state s expects, and if not, why.
func (s hostileSpec) settled(app *webappv1.WebApp) (bool, string) {
	ready, stalled := status.Get(app, status.Ready), status.Get(app, status.Stalled)
	state := fmt.Sprintf("generation %d, observed %d, conditions %s", app.Generation, app.Status.ObservedGeneration, conditions(app))
	if app.Status.ObservedGeneration != app.Generation {
		return false, s.String() + ": not observed yet: " + state
	}
	if len(s.want) == 0 {
		if ready == nil || ready.Status != metav1.ConditionTrue {
			return false, s.String() + ": want Ready: " + state
		}
		return true, ""
	}
	if stalled == nil || stalled.Status != metav1.ConditionTrue || ready == nil || ready.Status != metav1.ConditionFalse {
		return false, fmt.Sprintf("%s: want Stalled naming %v: %s", s, s.want, state)
	}
	for _, f := range s.want {
		if !strings.Contains(stalled.Message, f+":") {
			return false, fmt.Sprintf("%s: Stalled, but the message does not name %s: %s", s, shorten(f), shorten(stalled.Message))
		}
	}
	return true, ""
}

func conditions(app *webappv1.WebApp) string {
	var b strings.Builder
	for _, c := range app.Status.Conditions {
		fmt.Fprintf(&b, "[%s=%s %s: %s] ", c.Type, c.Status, c.Reason, shorten(c.Message))
	}
	return b.String()
}

// shorten cuts long strings (names of 253 characters, 1 MiB configs) for
// the test log.
func shorten(s string) string {
	if len(s) <= 200 {
		return s
	}
	return s[:120] + fmt.Sprintf("...(%d bytes)...", len(s)-180) + s[len(s)-60:]
}

// pad returns prefix followed by 'a's up to n bytes.
func pad(prefix string, n int) string { return prefix + strings.Repeat("a", n-len(prefix)) }

// choice is one way to fill a field: its value (absent: nil), why the API
// server refuses it, or the field the operator must name.
type choice struct {
	what    string
	value   any // nil: leave the field out
	refused string
	want    string
}

// pick chooses among choices by weight.
func pick(rng *rand.Rand, choices []weighted) choice {
	total := 0
	for _, c := range choices {
		total += c.weight
	}
	n := rng.IntN(total)
	for _, c := range choices {
		if n -= c.weight; n < 0 {
			return c.choice
		}
	}
	panic("unreachable")
}

type weighted struct {
	weight int
	choice
}

// generateWebApp makes the i-th hostile WebApp in namespace ns.
func generateWebApp(rng *rand.Rand, i int, ns string) hostileSpec {
	id := strconv.Itoa(i)
	name := pick(rng, []weighted{
		{30, choice{what: "short name", value: "web-" + id}},
		{10, choice{what: "name of 63", value: pad("w"+id+"-", 63)}},
		{8, choice{what: "name of 64", value: pad("w"+id+"-", 64), want: "metadata.name"}},
		{6, choice{what: "name of 253", value: pad("w"+id+"-", 253), want: "metadata.name"}},
		{4, choice{what: "name of 254", value: pad("w"+id+"-", 254), refused: "name over 253 characters"}},
		{8, choice{what: "dotted name", value: "web." + id + ".example", want: "metadata.name"}},
		{6, choice{what: "name with a leading digit", value: id + "-web", want: "metadata.name"}},
		{3, choice{what: "upper-case name", value: "Web-" + id, refused: "name not lower case"}},
		{3, choice{what: "unicode name", value: "wéb-" + id, refused: "name not ASCII"}},
		{2, choice{what: "name ending in a dash", value: "web-" + id + "-", refused: "name ends in a dash"}},
	})
	image := pick(rng, []weighted{
		{30, choice{what: "image with tag", value: "nginx:1.27"}},
		{10, choice{what: "image with registry and port", value: "registry.example.com:5000/team/web-app_2:v1.2.3-rc.1"}},
		{8, choice{what: "image with digest", value: "ghcr.io/org/app@sha256:" + strings.Repeat("ab", 32)}},
		{5, choice{what: "image of 512", value: strings.Repeat("a/", 255) + "ab"}},
		{3, choice{what: "image of 513", value: strings.Repeat("a/", 255) + "abc", refused: "image over 512 characters"}},
		{4, choice{what: "image with colons", value: "nginx:::", want: "spec.image"}},
		{3, choice{what: "upper-case image", value: "Nginx:1", want: "spec.image"}},
		{3, choice{what: "image with a space", value: "nginx 1.27", want: "spec.image"}},
		{3, choice{what: "unicode image", value: "nginx:ü💥", want: "spec.image"}},
		{2, choice{what: "image with NUL", value: "nginx\x00", want: "spec.image"}},
		{2, choice{what: "tag of 129", value: "nginx:" + strings.Repeat("t", 129), want: "spec.image"}},
		{3, choice{what: "empty image", value: "", refused: "image empty"}},
		{3, choice{what: "no image", refused: "image missing"}},
		{2, choice{what: "numeric image", value: int64(42), refused: "image not a string"}},
	})
	port := pick(rng, []weighted{
		{30, choice{what: "no port"}},
		{30, choice{what: "port", value: int64(1 + rng.IntN(65535))}},
		{3, choice{what: "port 65535", value: int64(65535)}},
		{2, choice{what: "port 0", value: int64(0), refused: "port below 1"}},
		{2, choice{what: "negative port", value: int64(-80), refused: "port below 1"}},
		{2, choice{what: "port 65536", value: int64(65536), refused: "port above 65535"}},
		{2, choice{what: "port as string", value: "80", refused: "port not a number"}},
	})
	replicas := pick(rng, []weighted{
		{30, choice{what: "no replicas"}},
		{30, choice{what: "replicas", value: int64(rng.IntN(4))}},
		{3, choice{what: "100 replicas", value: int64(100)}},
		{2, choice{what: "negative replicas", value: int64(-1), refused: "replicas below 0"}},
		{2, choice{what: "101 replicas", value: int64(101), refused: "replicas above 100"}},
		{2, choice{what: "replicas as string", value: "2", refused: "replicas not a number"}},
	})
	key253, key254 := strings.Repeat("K", 253), strings.Repeat("K", 254)
	config := pick(rng, []weighted{
		{30, choice{what: "no config"}},
		{20, choice{what: "config", value: map[string]any{"GREETING": "hi", "log.level": "debug"}}},
		{5, choice{what: "unicode config", value: map[string]any{"MSG": "héllo 🌍 \u202e مرحبا"}}},
		{3, choice{what: "config with control characters", value: map[string]any{"X": "a\x00b\n\tc\r\ufeff"}}},
		{2, choice{what: "config with NEL", value: map[string]any{"X": "a\u0085b"}, want: "spec.config[X]"}},
		{3, choice{what: "config with DEL", value: map[string]any{"X": "a\x00b\n\tc\x7f"}, want: "spec.config[X]"}},
		{3, choice{what: "64 config keys", value: manyKeys(64)}},
		{2, choice{what: "65 config keys", value: manyKeys(65), refused: "config over 64 keys"}},
		{3, choice{what: "config key of 253", value: map[string]any{key253: "v"}}},
		{3, choice{what: "config key of 254", value: map[string]any{key254: "v"}, want: "spec.config[" + key254 + "]"}},
		{3, choice{what: "config key with a leading digit", value: map[string]any{"1X": "v"}, want: "spec.config[1X]"}},
		{2, choice{what: "config key with =", value: map[string]any{"a=b": "v"}, want: "spec.config[a=b]"}},
		{2, choice{what: "unicode config key", value: map[string]any{"ключ": "v"}, want: "spec.config[ключ]"}},
		{2, choice{what: "config key .", value: map[string]any{".": "v"}, want: "spec.config[.]"}},
		{1, choice{what: "config of 1 MiB", value: map[string]any{"A": strings.Repeat("x", 1<<19), "B": strings.Repeat("y", 1<<19)}}},
		{1, choice{what: "config over 1 MiB", value: map[string]any{"A": strings.Repeat("x", 1<<19), "B": strings.Repeat("y", 1<<19+1)}, want: "spec.config"}},
		{2, choice{what: "config value not a string", value: map[string]any{"N": int64(5)}, refused: "config value not a string"}},
	})
	noSpec := rng.IntN(40) == 0

	s := hostileSpec{obj: &unstructured.Unstructured{Object: map[string]any{}}}
	s.obj.SetAPIVersion(webappv1.GroupVersion.String())
	s.obj.SetKind("WebApp")
	s.obj.SetNamespace(ns)
	s.obj.SetName(name.value.(string))
	spec := map[string]any{}
	for field, c := range map[string]choice{"image": image, "port": port, "replicas": replicas, "config": config} {
		if c.value != nil {
			spec[field] = c.value
		}
	}
	choices := []choice{name, image, port, replicas, config}
	if noSpec {
		choices = []choice{name, {what: "no spec", refused: "spec missing"}}
	} else {
		s.obj.Object["spec"] = spec
	}
	for _, c := range choices {
		s.what = append(s.what, c.what)
		if c.refused != "" && s.refused == "" {
			s.refused = c.refused
		}
		if c.want != "" {
			s.want = append(s.want, c.want)
		}
	}
	return s
}

func manyKeys(n int) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		m[fmt.Sprintf("KEY_%d", i)] = strconv.Itoa(i)
	}
	return m
}

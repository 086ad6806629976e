package controller_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	kubebuilderv1 "github.com/kopgo/kopgo/examples/kubebuilder/api/v1"
	"github.com/kopgo/kopgo/status"
)

// maxRequestsPerBadSpec bounds the requests the controller may send about
// a ConfigSet it cannot reconcile: the finalizer and the status (2), and a
// few more for a reconcile from a cache that lags behind (seen: at most 4).
// Before the controller ignored its own status writes, a ConfigSet near
// 1 MiB cost dozens of status writes, each an event for another reconcile.
const maxRequestsPerBadSpec = 8

// TestHostileSpecs creates a few hundred ConfigSets ($KOPGO_HOSTILE_SPECS,
// default 200) from a generator seeded by $KOPGO_HOSTILE_SEED (default 1):
// names at and over the length limits, dotted names, entry names the
// schema forbids, data keys that are no ConfigMap keys, huge and unicode
// values, control characters that server-side apply cannot carry, data at
// and over a ConfigMap's 1 MiB, missing fields. The generator knows what it
// made: the API server must refuse what the CRD's schema forbids; every
// ConfigSet it accepts whose ConfigMaps the API server would refuse must end
// Stalled (Ready=False) with a message naming each bad field, and is not
// retried (the controller goes quiet, after at most maxRequestsPerBadSpec
// requests about it); every other one must become Ready with
// ConfigMaps that hold exactly its data; and no reconcile may panic.
// Finally every ConfigSet can be deleted.
func TestHostileSpecs(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := t.Context()
	c := cluster.Client()
	traffic := &objectTraffic{byObject: map[string]int{}, log: map[string][]string{}, known: map[string]bool{}}
	panicsBefore := reconcilePanics(t)
	_, _ = startManager(t, ns, traffic)

	rng := rand.New(rand.NewPCG(hostileSeed(t), 0))
	var specs []hostileSpec
	refusals := map[string]int{} // by reason
	for i := range hostileSpecs(t) {
		s := generateConfigSet(rng, i, ns)
		traffic.add(s.obj.GetName())
		err := c.Create(ctx, s.obj)
		switch {
		case err == nil && s.refused != "":
			t.Errorf("the API server accepted %s, which the schema forbids (%s)", s, s.refused)
			specs = append(specs, s) // deleted at the end
		case err == nil:
			specs = append(specs, s)
		case (apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)) && s.refused == "":
			t.Errorf("the API server refused %s: %s", s, shorten(err.Error()))
		case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
			refusals[string(apierrors.ReasonForError(err))]++
		default:
			t.Fatalf("create %s: %s", s, shorten(err.Error()))
		}
	}
	defer deleteAll(t, ns, specs)

	settled := map[string]bool{}
	var lastWhy map[string]string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		why := map[string]string{}
		for _, s := range specs {
			n := s.obj.GetName()
			if settled[n] || s.refused != "" {
				continue
			}
			var cs kubebuilderv1.ConfigSet
			if err := c.Get(ctx, client.ObjectKeyFromObject(s.obj), &cs); err != nil {
				return false, err
			}
			if ok, reason := s.settled(&cs); ok {
				settled[n] = true
			} else {
				why[n] = reason
			}
		}
		lastWhy = why // a whole pass: a pass cut short by the deadline says nothing
		return len(why) == 0, nil
	})
	if err != nil {
		n := 0
		for _, why := range lastWhy {
			if n++; n > 10 {
				break
			}
			t.Error(why)
		}
		t.Fatalf("%d of %d ConfigSets did not settle as expected: %v", len(lastWhy), len(specs), err)
	}

	// Then the controller goes quiet: a Stalled ConfigSet is not retried, a
	// Ready one is left alone. Until then it may still write what it
	// wrote already, while its cache lags behind the API server: those
	// requests count, but must stay few.
	const window = 5 * time.Second
	settledAt := traffic.total()
	if err := traffic.quiet(ctx, window, time.Minute); err != nil {
		t.Error(err)
	}
	stalled, perBad, maxBad := 0, 0, 0
	for _, s := range specs {
		n := s.obj.GetName()
		if len(s.want) > 0 {
			stalled++
			sent := traffic.about(n)
			perBad += sent
			maxBad = max(maxBad, sent)
			if sent > maxRequestsPerBadSpec {
				t.Errorf("%s: %d requests, want at most %d: %s", s, sent, maxRequestsPerBadSpec, traffic.requests(n))
			}
			continue
		}
		// A Ready ConfigSet's ConfigMaps hold exactly its data: nothing
		// lost or changed on the way through server-side apply.
		checkConfigMaps(t, s)
	}
	if panics := reconcilePanics(t) - panicsBefore; panics > 0 {
		t.Errorf("%d reconciles panicked", panics)
	}
	refused := 0
	for _, n := range refusals {
		refused += n
	}
	t.Logf("%d specs: %d refused by the API server %v, %d stalled, %d converged",
		refused+len(specs), refused, refusals, stalled, len(specs)-stalled)
	if stalled > 0 {
		t.Logf("requests about a stalled ConfigSet: mean %.1f, max %d; about any ConfigSet after all settled: %d",
			float64(perBad)/float64(stalled), maxBad, traffic.total()-settledAt)
	}
	if stalled == 0 || stalled == len(specs) || refused == 0 {
		t.Errorf("the generator made no mix: %d refused, %d stalled, %d converged", refused, stalled, len(specs)-stalled)
	}
}

// checkConfigMaps fails t unless the ConfigMaps of s's ConfigSet hold
// exactly the data of its entries.
func checkConfigMaps(t *testing.T, s hostileSpec) {
	t.Helper()
	for _, e := range s.entries {
		var cm corev1.ConfigMap
		key := client.ObjectKey{Namespace: s.obj.GetNamespace(), Name: s.obj.GetName() + "-" + e.name}
		if err := cluster.Client().Get(t.Context(), key, &cm); err != nil {
			t.Errorf("%s: ConfigMap %s: %v", s, shorten(key.Name), err)
			continue
		}
		if diff := cmp.Diff(e.data, cm.Data, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: ConfigMap %s data (-want +got):\n%s", s, shorten(key.Name), shorten(diff))
		}
	}
}

// deleteAll deletes the ConfigSets of specs and waits until they are gone:
// the finalizer's cleanup succeeds whatever the spec.
func deleteAll(t *testing.T, ns string, specs []hostileSpec) {
	t.Helper()
	ctx := context.Background() // t.Context() is done by now
	c := cluster.Client()
	for _, s := range specs {
		if err := c.Delete(ctx, s.obj); err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var list kubebuilderv1.ConfigSetList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		return len(list.Items) == 0, nil
	})
	if err != nil {
		t.Errorf("ConfigSets left after deletion: %v", err)
	}
}

// hostileSpecs is the number of ConfigSets TestHostileSpecs creates:
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

// reconcilePanics reads controller-runtime's count of the ConfigSet
// controller's reconciles that panicked.
func reconcilePanics(t *testing.T) int {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_panics_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "configset" {
					n += int(m.GetCounter().GetValue())
				}
			}
		}
	}
	return n
}

// objectTraffic counts the controller's requests about each ConfigSet: the
// ConfigSet, its status, and its ConfigMaps ("<configset>-<entry>").
type objectTraffic struct {
	mu       sync.Mutex
	byObject map[string]int      // by ConfigSet name
	log      map[string][]string // by ConfigSet name: "PATCH configsets/<name>/status"
	known    map[string]bool     // the ConfigSets' names
}

// add makes name known, so that its ConfigMaps' requests count for it.
func (o *objectTraffic) add(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.known[name] = true
}

// wrap counts the requests of rt by the path
// /api[s]/.../namespaces/<ns>/<resource>/<name>[/status].
func (o *objectTraffic) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		o.record(r.Method, r.URL.Path)
		return rt.RoundTrip(r)
	})
}

func (o *objectTraffic) record(method, path string) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	i := slices.Index(parts, "namespaces")
	if i < 0 || len(parts) < i+4 {
		return // not about one object
	}
	resource, name := parts[i+2], parts[i+3]
	what := method + " " + strings.Join(parts[i+2:], "/")
	o.mu.Lock()
	defer o.mu.Unlock()
	switch resource {
	case "configsets":
	case "configmaps":
		// "<configset>-<entry>": the longest known ConfigSet name before
		// a dash.
		for j := len(name) - 1; j > 0; j-- {
			if name[j] == '-' && o.known[name[:j]] {
				name = name[:j]
				break
			}
		}
	default:
		return
	}
	o.byObject[name]++
	o.log[name] = append(o.log[name], what)
}

// requests lists the requests about the ConfigSet name, in order.
func (o *objectTraffic) requests(name string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return shorten(strings.Join(o.log[name], ", "))
}

// total is the number of requests about any ConfigSet.
func (o *objectTraffic) total() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, c := range o.byObject {
		n += c
	}
	return n
}

// quiet waits until a whole window passes without a request about any
// ConfigSet, for up to timeout.
func (o *objectTraffic) quiet(ctx context.Context, window, timeout time.Duration) error {
	last, since := o.total(), time.Now()
	err := wait.PollUntilContextTimeout(ctx, window/10, timeout, false, func(context.Context) (bool, error) {
		if n := o.total(); n != last {
			last, since = n, time.Now()
		}
		return time.Since(since) >= window, nil
	})
	if err != nil {
		return fmt.Errorf("the controller did not go quiet for %s within %s: %d requests about ConfigSets so far", window, timeout, last)
	}
	return nil
}

func (o *objectTraffic) about(name string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.byObject[name]
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// hostileSpec is one generated ConfigSet and what must become of it.
type hostileSpec struct {
	obj *unstructured.Unstructured
	// entries are its configs, for the check of its ConfigMaps.
	entries []hostileEntry
	// refused says why the API server must refuse it ("" if it must not).
	refused string
	// want are the fields the Stalled message must name; none: the
	// ConfigSet must become Ready.
	want []string
	// what describes the choices, for failure messages.
	what []string
}

type hostileEntry struct {
	name string
	data map[string]string
}

func (s hostileSpec) String() string {
	return fmt.Sprintf("ConfigSet %s (%s)", shorten(s.obj.GetName()), strings.Join(s.what, ", "))
}

// settled reports whether cs reached the state s expects, and if not, why.
func (s hostileSpec) settled(cs *kubebuilderv1.ConfigSet) (bool, string) {
	ready, stalled := status.Get(conds(cs), status.Ready), status.Get(conds(cs), status.Stalled)
	state := fmt.Sprintf("generation %d, observed %d, conditions %s", cs.Generation, cs.Status.ObservedGeneration, conditions(cs))
	if cs.Status.ObservedGeneration != cs.Generation {
		return false, s.String() + ": not observed yet: " + state
	}
	if len(s.want) == 0 {
		if ready == nil || ready.Status != metav1.ConditionTrue || int(cs.Status.ConfigMaps) != len(s.entries) {
			return false, fmt.Sprintf("%s: want Ready with %d ConfigMaps: %s, %d ConfigMaps", s, len(s.entries), state, cs.Status.ConfigMaps)
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

func conditions(cs *kubebuilderv1.ConfigSet) string {
	var b strings.Builder
	for _, c := range cs.Status.Conditions {
		fmt.Fprintf(&b, "[%s=%s %s: %s] ", c.Type, c.Status, c.Reason, shorten(c.Message))
	}
	return b.String()
}

// shorten cuts long strings (names of 253 characters, 1 MiB values) for
// the test log.
func shorten(s string) string {
	if len(s) <= 300 {
		return s
	}
	return s[:200] + fmt.Sprintf("...(%d bytes)...", len(s)-260) + s[len(s)-60:]
}

// pad returns prefix followed by 'a's up to n bytes.
func pad(prefix string, n int) string { return prefix + strings.Repeat("a", n-len(prefix)) }

// choice is one way to fill a field: its value (absent: nil), why the API
// server refuses it, or the field the controller must name.
type choice struct {
	what    string
	value   any // nil: leave the field out
	refused string
	want    string
}

type weighted struct {
	weight int
	choice
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

// generateConfigSet makes the i-th hostile ConfigSet in namespace ns.
func generateConfigSet(rng *rand.Rand, i int, ns string) hostileSpec {
	id := strconv.Itoa(i)
	name := pick(rng, []weighted{
		{30, choice{what: "short name", value: "cs-" + id}},
		{8, choice{what: "name of 63", value: pad("c"+id+"-", 63)}},
		{6, choice{what: "name of 64", value: pad("c"+id+"-", 64), want: "metadata.name"}},
		{4, choice{what: "name of 253", value: pad("c"+id+"-", 253), want: "metadata.name"}},
		{3, choice{what: "name of 254", value: pad("c"+id+"-", 254), refused: "name over 253 characters"}},
		{8, choice{what: "dotted name", value: "cs." + id + ".example"}},
		{5, choice{what: "name with a leading digit", value: id + "-cs"}},
		{2, choice{what: "upper-case name", value: "Cs-" + id, refused: "name not lower case"}},
		{2, choice{what: "unicode name", value: "cś-" + id, refused: "name not ASCII"}},
		{2, choice{what: "name ending in a dash", value: "cs-" + id + "-", refused: "name ends in a dash"}},
	})
	s := hostileSpec{obj: &unstructured.Unstructured{Object: map[string]any{}}}
	s.obj.SetAPIVersion(kubebuilderv1.GroupVersion.String())
	s.obj.SetKind("ConfigSet")
	s.obj.SetNamespace(ns)
	s.obj.SetName(name.value.(string))
	s.add(name)

	switch rng.IntN(40) {
	case 0:
		s.add(choice{what: "no spec", refused: "spec missing"})
		return s
	case 1:
		s.obj.Object["spec"] = map[string]any{}
		s.add(choice{what: "empty spec"})
		return s
	case 2:
		s.obj.Object["spec"] = map[string]any{"configs": "web", "unknown": true}
		s.add(choice{what: "configs not a list", refused: "configs not a list"})
		return s
	}
	n := pick(rng, []weighted{
		{30, choice{what: "1 entry", value: 1}},
		{20, choice{what: "2 entries", value: 2}},
		{10, choice{what: "3 entries", value: 3}},
		{3, choice{what: "32 entries", value: 32}},
		{2, choice{what: "33 entries", value: 33, refused: "over 32 configs"}},
	}).value.(int)
	var configs []any
	var firstName any // the first entry's name, for a duplicate
	big := false      // at most one entry near 1 MiB: a ConfigSet holds no more
	for j := range n {
		path := fmt.Sprintf("spec.configs[%d]", j)
		entryName := pick(rng, []weighted{
			{60, choice{what: "entry", value: "e" + strconv.Itoa(j)}},
			{3, choice{what: "entry name of 63", value: pad("e"+strconv.Itoa(j)+"-", 63)}},
			{1, choice{what: "entry name of 64", value: pad("e"+strconv.Itoa(j)+"-", 64), refused: "entry name over 63"}},
			{1, choice{what: "dotted entry name", value: "e.x", refused: "entry name not a DNS label"}},
			{1, choice{what: "upper-case entry name", value: "E" + strconv.Itoa(j), refused: "entry name not a DNS label"}},
			{1, choice{what: "empty entry name", value: "", refused: "entry name empty"}},
			{1, choice{what: "no entry name", refused: "entry name missing"}},
			{1, choice{what: "duplicate entry name", value: firstName, refused: "entry names not unique"}},
		})
		if j == 0 {
			if entryName.what == "duplicate entry name" {
				entryName = choice{what: "entry", value: "e0"}
			}
			firstName = entryName.value
		}
		data := generateData(rng, path, !big)
		if data.what == "1 MiB of data" || data.what == "data over 1 MiB" {
			big = true
		}
		if n > 3 { // keep 32 entries small
			data = choice{what: "small data", value: map[string]any{"k": "v"}}
		}
		entry := map[string]any{}
		if entryName.value != nil {
			entry["name"] = entryName.value
		}
		if data.value != nil {
			entry["data"] = data.value
		}
		configs = append(configs, entry)
		s.add(entryName)
		s.add(data)
		if entryName.value != nil {
			he := hostileEntry{name: entryName.value.(string), data: map[string]string{}}
			if m, ok := data.value.(map[string]any); ok {
				for k, v := range m {
					if v, ok := v.(string); ok {
						he.data[k] = v
					}
				}
			}
			s.entries = append(s.entries, he)
		}
	}
	s.obj.Object["spec"] = map[string]any{"configs": configs}
	return s
}

// generateData makes the data of entry path (spec.configs[j]); huge says
// whether it may be near 1 MiB.
func generateData(rng *rand.Rand, path string, huge bool) choice {
	data := path + ".data"
	key253, key254 := strings.Repeat("K", 253), strings.Repeat("K", 254)
	choices := []weighted{
		{20, choice{what: "no data"}},
		{10, choice{what: "empty data", value: map[string]any{}}},
		{60, choice{what: "data", value: map[string]any{"mode": "fast", "log.level": "debug", "a_b-c.d": "x=y"}}},
		{6, choice{what: "unicode value", value: map[string]any{"msg": "héllo 🌍 \u202e مرحبا \u2028"}}},
		{4, choice{what: "value with control characters", value: map[string]any{"x": "a\x00b\n\tc\r\x1b[0m\ufeff"}}},
		{3, choice{what: "empty value", value: map[string]any{"x": ""}}},
		{3, choice{what: "value with NEL", value: map[string]any{"x": "a\u0085b"}, want: data + "[x]"}},
		{3, choice{what: "value with DEL", value: map[string]any{"x": "a\x7f"}, want: data + "[x]"}},
		{2, choice{what: "value with C1", value: map[string]any{"x": "\u009b31m"}, want: data + "[x]"}},
		{2, choice{what: "value with U+FFFE", value: map[string]any{"x": "\ufffe"}, want: data + "[x]"}},
		{2, choice{what: "value with U+FFFF", value: map[string]any{"y": "ok", "x": "z\uffff"}, want: data + "[x]"}},
		{3, choice{what: "256 keys", value: manyKeys(256)}},
		{2, choice{what: "257 keys", value: manyKeys(257), refused: "over 256 keys"}},
		{3, choice{what: "key of 253", value: map[string]any{key253: "v"}}},
		{3, choice{what: "key of 254", value: map[string]any{key254: "v"}, refused: "key over 253 characters"}},
		{3, choice{what: "key with a leading digit", value: map[string]any{"1x": "v"}}},
		{2, choice{what: "key with =", value: map[string]any{"a=b": "v"}, refused: "key not a ConfigMap key"}},
		{2, choice{what: "key with a space", value: map[string]any{"a b": "v"}, refused: "key not a ConfigMap key"}},
		{2, choice{what: "key with a slash", value: map[string]any{"a/b": "v"}, refused: "key not a ConfigMap key"}},
		{2, choice{what: "unicode key", value: map[string]any{"ключ": "v"}, refused: "key not a ConfigMap key"}},
		{2, choice{what: "key with DEL", value: map[string]any{"k\x7f": "v"}, refused: "key not a ConfigMap key"}},
		{2, choice{what: "key with NEL", value: map[string]any{"k\u0085": "v"}, refused: "key not a ConfigMap key"}},
		{2, choice{what: "empty key", value: map[string]any{"": "v"}, refused: "key empty"}},
		{1, choice{what: "key .", value: map[string]any{".": "v"}, refused: "key ."}},
		{1, choice{what: "key ..", value: map[string]any{"..": "v"}, refused: "key .."}},
		{1, choice{what: "key ..x", value: map[string]any{"..x": "v"}, refused: "key starts with .."}},
		{2, choice{what: "value not a string", value: map[string]any{"n": int64(5)}, refused: "value not a string"}},
		{1, choice{what: "data not a map", value: "k=v", refused: "data not a map"}},
	}
	if huge {
		choices = append(choices,
			weighted{1, choice{what: "1 MiB of data", value: map[string]any{"a": strings.Repeat("x", 1<<19), "b": strings.Repeat("y", 1<<19)}}},
			weighted{1, choice{what: "data over 1 MiB", value: map[string]any{"a": strings.Repeat("x", 1<<19), "b": strings.Repeat("y", 1<<19+1)}, want: data}},
			weighted{1, choice{what: "value of 1 MiB in unicode", value: map[string]any{"u": strings.Repeat("é", 1<<19)}}},
		)
	}
	return pick(rng, choices)
}

// add records c's description and what it makes of s.
func (s *hostileSpec) add(c choice) {
	s.what = append(s.what, c.what)
	if c.refused != "" && s.refused == "" {
		s.refused = c.refused
	}
	if c.want != "" {
		s.want = append(s.want, c.want)
	}
}

func manyKeys(n int) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		m[fmt.Sprintf("key-%d", i)] = strconv.Itoa(i)
	}
	return m
}

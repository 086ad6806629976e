package echoserver_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kopgo/kopgo/examples/echoserver/api/v1alpha1"
	"github.com/kopgo/kopgo/status"
)

// TestHostileSpecs creates a few hundred EchoServers ($KOPGO_HOSTILE_SPECS,
// default 200) from a generator seeded by $KOPGO_HOSTILE_SEED (default 1):
// names at and over the length limits, dotted names, huge, unicode and
// control-character messages, missing fields, out-of-range and mistyped
// numbers. The generator knows what it made: the API server must refuse
// what the CRD's schema forbids, every EchoServer it accepts that cannot
// have valid children must end Stalled (Ready=False) with a message naming
// the problem, every other one must become Ready, and none may make the
// operator panic. A Stalled EchoServer is not retried: no request about it
// once it settled.
func TestHostileSpecs(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := t.Context()
	c := cluster.Client()
	name, requests, _ := startOperator(t, ns)

	rng := rand.New(rand.NewPCG(hostileSeed(t), 0))
	var specs []hostileSpec
	refusals := map[string]int{} // by reason
	for i := range hostileSpecs(t) {
		s := generateEchoServer(rng, i, ns)
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

	stop := fakeDeploymentController(t, ns)
	atSettle := map[string]int{} // requests about each EchoServer when it settled
	var lastWhy map[string]string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		why := map[string]string{}
		for _, s := range specs {
			n := s.obj.GetName()
			if _, ok := atSettle[n]; ok {
				continue
			}
			var es v1alpha1.EchoServer
			if err := c.Get(ctx, client.ObjectKeyFromObject(s.obj), &es); err != nil {
				return false, err
			}
			if ok, reason := s.settled(&es); ok {
				atSettle[n] = requests.about(n)
			} else {
				why[n] = reason
			}
		}
		lastWhy = why // a whole pass: a pass cut short by the deadline says nothing
		return len(why) == 0, nil
	})
	stop()
	if err != nil {
		n := 0
		for _, why := range lastWhy {
			if n++; n > 10 {
				break
			}
			t.Error(why)
		}
		t.Fatalf("%d of %d EchoServers did not settle as expected: %v", len(lastWhy), len(specs), err)
	}

	// A fixed window after every EchoServer settled: a Stalled one is not
	// retried, a Ready one is left alone.
	const window = 5 * time.Second
	time.Sleep(window)
	stalled, perBad, maxBad, after := 0, 0, 0, 0
	for _, s := range specs {
		n := s.obj.GetName()
		more := requests.about(n) - atSettle[n]
		after += more
		if more > 0 {
			t.Errorf("%s: %d requests after it settled, want none", s, more)
		}
		if len(s.want) > 0 {
			stalled++
			perBad += atSettle[n]
			maxBad = max(maxBad, atSettle[n])
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
		t.Logf("requests about a stalled EchoServer until it settled: mean %.1f, max %d; in the %s after: %d about any EchoServer",
			float64(perBad)/float64(stalled), maxBad, window, after)
	}
	if stalled == 0 || stalled == len(specs) || refused == 0 {
		t.Errorf("the generator made no mix: %d refused, %d stalled, %d converged", refused, stalled, len(specs)-stalled)
	}
}

// hostileSpecs is the number of EchoServers TestHostileSpecs creates:
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

// fakeDeploymentController plays the Deployment controller, absent from a
// bare control plane: it reports each Deployment's current generation rolled
// out. It stops when the returned function is called.
func fakeDeploymentController(t *testing.T, ns string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c := cluster.Client()
		for ctx.Err() == nil {
			var list appsv1.DeploymentList
			if err := c.List(ctx, &list, client.InNamespace(ns)); err == nil {
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

// hostileSpec is one generated EchoServer and what must become of it.
type hostileSpec struct {
	obj *unstructured.Unstructured
	// refused says why the API server must refuse it ("" if it must not).
	refused string
	// want are what the Stalled message must say (fields it names); none:
	// the EchoServer must become Ready.
	want []string
	// what describes the choices, for failure messages.
	what []string
}

func (s hostileSpec) String() string {
	return fmt.Sprintf("EchoServer %s (%s)", shorten(s.obj.GetName()), strings.Join(s.what, ", "))
}

// settled reports whether es reached the state s expects, and if not, why.
func (s hostileSpec) settled(es *v1alpha1.EchoServer) (bool, string) {
	ready, stalled := status.Get(es, status.Ready), status.Get(es, status.Stalled)
	state := fmt.Sprintf("generation %d, observed %d, conditions %s", es.Generation, es.Status.ObservedGeneration, conditions(es))
	if es.Status.ObservedGeneration != es.Generation {
		return false, s.String() + ": not observed yet: " + state
	}
	if len(s.want) == 0 {
		if ready == nil || ready.Status != metav1.ConditionTrue {
			return false, s.String() + ": want Ready: " + state
		}
		return true, ""
	}
	if stalled == nil || stalled.Status != metav1.ConditionTrue || ready == nil || ready.Status != metav1.ConditionFalse {
		return false, fmt.Sprintf("%s: want Stalled saying %q: %s", s, s.want, state)
	}
	for _, w := range s.want {
		if !strings.Contains(stalled.Message, w) {
			return false, fmt.Sprintf("%s: Stalled, but the message does not say %q: %s", s, w, shorten(stalled.Message))
		}
	}
	return true, ""
}

func conditions(es *v1alpha1.EchoServer) string {
	var b strings.Builder
	for _, c := range es.Status.Conditions {
		fmt.Fprintf(&b, "[%s=%s %s: %s] ", c.Type, c.Status, c.Reason, shorten(c.Message))
	}
	return b.String()
}

// shorten cuts long strings (names of 253 characters) for the test log.
func shorten(s string) string {
	if len(s) <= 200 {
		return s
	}
	return s[:120] + fmt.Sprintf("...(%d bytes)...", len(s)-180) + s[len(s)-60:]
}

// pad returns prefix followed by 'a's up to n bytes.
func pad(prefix string, n int) string { return prefix + strings.Repeat("a", n-len(prefix)) }

// choice is one way to fill a field: its value (absent: nil), why the API
// server refuses it, or what the Stalled message must say.
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

// generateEchoServer makes the i-th hostile EchoServer in namespace ns.
func generateEchoServer(rng *rand.Rand, i int, ns string) hostileSpec {
	id := strconv.Itoa(i)
	// reconciler.Sync refuses a parent whose name is no label value before
	// the sync function runs; its message names the owner label.
	const labelValue = "cannot be named in label"
	name := pick(rng, []weighted{
		{30, choice{what: "short name", value: "echo-" + id}},
		{10, choice{what: "name of 63", value: pad("e"+id+"-", 63)}},
		{8, choice{what: "name of 64", value: pad("e"+id+"-", 64), want: labelValue}},
		{6, choice{what: "name of 253", value: pad("e"+id+"-", 253), want: labelValue}},
		{4, choice{what: "name of 254", value: pad("e"+id+"-", 254), refused: "name over 253 characters"}},
		{8, choice{what: "dotted name", value: "echo." + id + ".example", want: "metadata.name:"}},
		{6, choice{what: "name with a leading digit", value: id + "-echo", want: "metadata.name:"}},
		{3, choice{what: "upper-case name", value: "Echo-" + id, refused: "name not lower case"}},
		{3, choice{what: "unicode name", value: "écho-" + id, refused: "name not ASCII"}},
		{2, choice{what: "name ending in a dash", value: "echo-" + id + "-", refused: "name ends in a dash"}},
	})
	message := pick(rng, []weighted{
		{30, choice{what: "message", value: "hello, " + id}},
		{6, choice{what: "message of 1024", value: strings.Repeat("m", 1024)}},
		{4, choice{what: "message of 1024 runes", value: strings.Repeat("€", 1024)}},
		{3, choice{what: "message of 1025", value: strings.Repeat("m", 1025), refused: "message over 1024 characters"}},
		{6, choice{what: "unicode message", value: "héllo 🌍 \u202e مرحبا \U0010FFFD"}},
		{4, choice{what: "message with control characters", value: "a\x00b\n\tc\r\ufeff"}},
		{2, choice{what: "message with NEL", value: "a\u0085b", want: "spec.message:"}},
		{4, choice{what: "message with shell and quoting", value: "\"'`$(rm -rf /) ${HOME} -listen=:1 --text=x"}},
		{3, choice{what: "message with DEL", value: "a\x7fb", want: "spec.message:"}},
		{3, choice{what: "message with a C1 control", value: "a\u009bb", want: "spec.message:"}},
		{3, choice{what: "empty message", value: "", refused: "message empty"}},
		{3, choice{what: "no message", refused: "message missing"}},
		{2, choice{what: "numeric message", value: int64(42), refused: "message not a string"}},
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
	noSpec := rng.IntN(40) == 0

	s := hostileSpec{obj: &unstructured.Unstructured{Object: map[string]any{}}}
	s.obj.SetAPIVersion(v1alpha1.GroupVersion.String())
	s.obj.SetKind("EchoServer")
	s.obj.SetNamespace(ns)
	s.obj.SetName(name.value.(string))
	spec := map[string]any{}
	for field, c := range map[string]choice{"message": message, "port": port, "replicas": replicas} {
		if c.value != nil {
			spec[field] = c.value
		}
	}
	choices := []choice{name, message, port, replicas}
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
	// The owner label is checked before the sync function: a name over 63
	// characters hides every other problem.
	if len(s.obj.GetName()) > 63 {
		s.want = []string{labelValue}
	}
	return s
}

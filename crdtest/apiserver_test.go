package crdtest_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// verdict is what a client learns of a write: accepted, or refused with
// the API server's message and causes.
type verdict struct {
	Accepted bool
	Message  string
	Causes   []metav1.StatusCause
}

// serverVerdict is the verdict in the API server's answer err.
func serverVerdict(t *testing.T, err error) verdict {
	t.Helper()
	if err == nil {
		return verdict{Accepted: true}
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Reason != metav1.StatusReasonInvalid {
		t.Fatalf("the API server answered %v, not Invalid", err)
	}
	s := status.Status()
	return verdict{Message: s.Message, Causes: s.Details.Causes}
}

// offlineVerdict is the verdict the API server would answer with errs for
// the object of kind gk named name (apierrors.NewInvalid, as the server's
// registry does).
func offlineVerdict(gk schema.GroupKind, name string, errs field.ErrorList) verdict {
	if len(errs) == 0 {
		return verdict{Accepted: true}
	}
	s := apierrors.NewInvalid(gk, name, errs).Status()
	return verdict{Message: s.Message, Causes: s.Details.Causes}
}

// inServerOrder returns errs in the order of server's causes, if errs
// and the causes are the same (type, field and message) up to order:
// the API server's schema validator walks an object's properties in Go
// map order, so the order of its errors differs from one request to the
// next, in the server as offline. Otherwise it returns errs unchanged.
func inServerOrder(server verdict, errs field.ErrorList) field.ErrorList {
	if len(server.Causes) != len(errs) {
		return errs
	}
	used := make([]bool, len(errs))
	ordered := make(field.ErrorList, 0, len(errs))
	for _, c := range server.Causes {
		found := false
		for i, e := range errs {
			if !used[i] && string(e.Type) == string(c.Type) && e.Field == c.Field && e.ErrorBody() == c.Message {
				used[i], found = true, true
				ordered = append(ordered, e)
				break
			}
		}
		if !found {
			return errs
		}
	}
	return ordered
}

// gizmoGen generates Gizmo specs, valid and invalid in every way the
// Gizmo CRD checks, from a seeded source.
type gizmoGen struct{ r *rand.Rand }

func (g gizmoGen) pick(p float64) bool { return g.r.Float64() < p }

func (g gizmoGen) oneOf(vs ...any) any { return vs[g.r.IntN(len(vs))] }

func (g gizmoGen) spec() map[string]any {
	const bad = 0.03 // the chance of each kind of defect
	s := map[string]any{}
	switch x := g.r.Float64(); {
	case x < bad:
		s["image"] = "NGINX:latest" // pattern
	case x < 2*bad:
		s["image"] = strings.Repeat("a", 41) // maxLength
	case x < 3*bad:
		s["image"] = int64(7) // type
	case x < 4*bad: // required
	default:
		s["image"] = g.oneOf("nginx", "nginx:1.27", "registry.k8s.io/pause:3.10")
	}
	switch x := g.r.Float64(); {
	case x < bad:
		s["replicas"] = int64(101 + g.r.IntN(10)) // maximum
	case x < 2*bad:
		s["replicas"] = int64(-1) // minimum
	case x < 3*bad:
		s["replicas"] = "three" // type
	case x < 4*bad: // required
	default:
		s["replicas"] = int64(g.r.IntN(8))
	}
	if g.pick(0.3) {
		s["minReplicas"] = int64(g.r.IntN(5)) // the rule with a fieldPath, when above replicas
	}
	if g.pick(0.6) {
		s["mode"] = g.oneOf("Fast", "Safe", "Safe") // Safe needs 2 replicas
		if g.pick(bad) {
			s["mode"] = "Slow" // enum
		}
	}
	if g.pick(0.3) {
		s["owner"] = g.oneOf("dev@example.com", "ops@example.org") // format email
		if g.pick(bad) {
			s["owner"] = "nobody"
		}
	}
	if g.pick(0.2) {
		s["id"] = "0b9a6d5e-4c8f-4d1e-9a57-2f3c8e1b7a60" // format uuid
		if g.pick(bad) {
			s["id"] = "not-a-uuid"
		}
	}
	if g.pick(0.5) {
		names := []string{"http", "https", "metrics", "grpc"}
		g.r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		var ports []any
		for _, name := range names[:g.r.IntN(4)] {
			ports = append(ports, map[string]any{"name": name, "port": g.oneOf(int64(80), int64(443), int64(8080), int64(9090))})
		}
		switch x := g.r.Float64(); {
		case x < bad:
			ports = append(ports, map[string]any{"name": "ssh", "port": int64(22)}) // rule: 22 reserved
		case x < 2*bad:
			ports = append(ports, map[string]any{"name": "http", "port": int64(81)}) // list-map key; rule: one http
		case x < 3*bad:
			ports = append(ports, map[string]any{"name": "a-name-too-long-here", "port": int64(1)}) // maxLength
		case x < 4*bad:
			ports = append(ports, map[string]any{"name": "admin", "port": int64(0)}) // minimum
		case x < 5*bad:
			ports = append(ports, map[string]any{"name": "admin"}) // required in an item
		case x < 6*bad:
			ports = append(ports, map[string]any{"name": "a", "port": int64(1)}, map[string]any{"name": "b", "port": int64(2)}) // maxItems, when 3 or more
		}
		s["ports"] = ports
	}
	if g.pick(0.4) {
		tags := []any{}
		for _, tag := range []string{"a", "b", "c", "managed"} {
			if g.pick(0.5) {
				tags = append(tags, tag)
			}
		}
		switch x := g.r.Float64(); {
		case x < bad:
			tags = append(tags, "Blue") // rule: lower case
		case x < 2*bad:
			tags = append(tags, "x", "x") // set
		case x < 3*bad:
			tags = append(tags, "far-too-long") // maxLength
		case x < 4*bad:
			tags = append(tags, "d", "e") // maxItems, when 4 or more
		}
		s["tags"] = tags
	}
	if g.pick(0.1) {
		s["color"] = "red" // unknown: pruned
	}
	return s
}

// mutate changes some of old's spec fields, for an update.
func (g gizmoGen) mutate(spec map[string]any) map[string]any {
	out := maps.Clone(spec)
	fresh := g.spec()
	for _, k := range slices.Sorted(maps.Keys(fresh)) { // in order: the same seed, the same updates
		if g.pick(0.3) {
			out[k] = fresh[k]
		}
	}
	if g.pick(0.15) {
		delete(out, "mode") // defaulted to Fast: immutable unless it was Fast
	}
	if r, ok := out["replicas"].(int64); ok && g.pick(0.3) {
		out["replicas"] = r * int64(1+g.r.IntN(4)) // may more than double
	}
	return out
}

// TestAgreesWithAPIServer sends generated Gizmos to the real API server,
// creates and then updates of those it accepted (for the transition
// rules), and checks that the offline validator gives every one the same
// verdict: accepted or not, and the same message and causes (field path,
// type and message).
func TestAgreesWithAPIServer(t *testing.T) {
	const creates, seed = 1200, 37
	v := gizmoValidator(t)
	gk := v.GroupVersionKind().GroupKind()
	c := cluster.Client()
	ns := cluster.Namespace(t)
	g := gizmoGen{r: rand.New(rand.NewPCG(seed, seed))} //nolint:gosec // reproducible test data
	var stats struct{ createOK, createInvalid, updateOK, updateInvalid, mismatches int }
	check := func(what string, errs field.ErrorList, server verdict, obj *unstructured.Unstructured) {
		t.Helper()
		offline := offlineVerdict(gk, obj.GetName(), inServerOrder(server, errs))
		if diff := cmp.Diff(server, offline); diff != "" {
			stats.mismatches++
			if stats.mismatches <= 20 {
				t.Errorf("%s %v: the offline verdict differs from the API server's (-server +offline):\n%s", what, obj.Object["spec"], diff)
			}
		}
	}
	start := time.Now()
	for i := range creates {
		obj := gizmo(g.spec())
		obj.SetNamespace(ns)
		obj.SetName(fmt.Sprintf("g-%d", i))
		if g.pick(0.1) {
			obj.Object["status"] = map[string]any{"phase": int64(7)} // dropped on create: status subresource
		}
		errs := v.Validate(t.Context(), obj)
		created := obj.DeepCopy()
		server := serverVerdict(t, c.Create(t.Context(), created))
		check("create", errs, server, obj)
		if !server.Accepted {
			stats.createInvalid++
			continue
		}
		stats.createOK++

		updated := created.DeepCopy()
		updated.Object["spec"] = g.mutate(created.Object["spec"].(map[string]any))
		errs = v.ValidateUpdate(t.Context(), updated, created)
		server = serverVerdict(t, c.Update(t.Context(), updated.DeepCopy()))
		check("update", errs, server, updated)
		if server.Accepted {
			stats.updateOK++
		} else {
			stats.updateInvalid++
		}
	}
	t.Logf("seed %d: %d creates (%d accepted, %d refused), %d updates (%d accepted, %d refused): %d verdicts differ, in %s",
		seed, creates, stats.createOK, stats.createInvalid, stats.createOK, stats.updateOK, stats.updateInvalid, stats.mismatches, time.Since(start).Round(time.Millisecond))
	// A generator that produced only valid or only invalid objects would
	// prove little.
	for _, n := range []int{stats.createOK, stats.createInvalid, stats.updateOK, stats.updateInvalid} {
		if n < creates/20 {
			t.Errorf("too few of one kind of verdict (%+v): the generator needs rebalancing", stats)
		}
	}
}

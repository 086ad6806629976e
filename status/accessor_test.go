package status_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// bareWidget is a Widget as a type without kopgo's methods: the same
// fields and JSON, none of *widget.Widget's methods (a type from another
// module, or kubebuilder's tutorial types, look like this to kopgo).
type bareWidget widget.Widget

func (w *bareWidget) DeepCopyObject() runtime.Object {
	return (*bareWidget)((*widget.Widget)(w).DeepCopyObject().(*widget.Widget))
}

func accessBare(w *bareWidget) *status.GenerationAccessor {
	return status.Access(w, &w.Status.Conditions).WithObservedGeneration(&w.Status.ObservedGeneration)
}

// A step of a reconcile, applied to the method form and to the accessor
// form alike.
type step struct {
	name       string
	generation int64
	do         func(status.Setter) bool
}

var steps = []step{
	{"Set Available", 1, func(s status.Setter) bool {
		return status.Set(s, metav1.Condition{Type: "Available", Status: metav1.ConditionTrue, Reason: "MinimumReplicas"})
	}},
	{"MarkReconciling", 1, func(s status.Setter) bool { return status.MarkReconciling(s, "RollingOut", "1/3") }},
	{"Begin, MarkReconciling, Finish", 1, func(s status.Setter) bool {
		read := status.Begin(s)
		status.MarkReconciling(s, "RollingOut", "2/3")
		return status.Finish(s, read, nil)
	}},
	{"SetError nil", 1, func(s status.Setter) bool { return status.SetError(s, nil) }},
	{"SetError nil again", 1, func(s status.Setter) bool { return status.SetError(s, nil) }},
	{"new generation, SetError retryable", 2, func(s status.Setter) bool {
		return status.SetError(s, koperrors.Errorf(koperrors.Unavailable, "registry down"))
	}},
	{"SetError terminal", 2, func(s status.Setter) bool {
		return status.SetError(s, koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "spec.size: must be positive")))
	}},
	{"Begin, MarkStalled, Finish", 2, func(s status.Setter) bool {
		read := status.Begin(s)
		status.MarkStalled(s, "Invalid", "spec.size: still negative")
		return status.Finish(s, read, nil)
	}},
	{"MarkReady", 3, func(s status.Setter) bool { return status.MarkReady(s, "Deployed", "3/3") }},
	{"Remove Available", 3, func(s status.Setter) bool { return status.Remove(s, "Available") }},
	{"SetObservedGeneration", 3, func(s status.Setter) bool { return status.SetObservedGeneration(s) }},
	{"SetError nil at generation 3", 3, func(s status.Setter) bool { return status.SetError(s, nil) }},
}

// outcome is what a user sees of one step.
type outcome struct {
	Changed, Current, Ready, Stalled bool
	ObservedGeneration               int64
	Conditions                       []metav1.Condition
	Kept                             map[string]bool // lastTransitionTime kept, by type
}

func outcomeOf(s status.Setter, changed bool, before []metav1.Condition) outcome {
	o := outcome{Changed: changed, Current: status.IsCurrent(s), Ready: status.IsTrue(s, status.Ready),
		Stalled: status.IsTrue(s, status.Stalled), Conditions: s.GetConditions(), Kept: map[string]bool{}}
	if og, ok := s.(status.ObservedGenerationAccessor); ok {
		o.ObservedGeneration = og.GetObservedGeneration()
	}
	for _, c := range s.GetConditions() {
		for _, b := range before {
			if b.Type == c.Type {
				o.Kept[c.Type] = b.LastTransitionTime.Equal(&c.LastTransitionTime)
			}
		}
	}
	return o
}

// The accessor form behaves as the method form: same conditions, same
// observedGeneration, same answers, lastTransitionTime kept in the same
// places, through Set, Mark*, Begin/Finish, SetError and Remove; with
// observedGeneration (Widget) and without (gadget).
func TestAccessorBehavesAsTheMethodForm(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method func() (status.Setter, func(int64))
		access func() (status.Setter, func(int64))
	}{
		{"with observedGeneration", func() (status.Setter, func(int64)) {
			w := &widget.Widget{}
			return w, func(g int64) { w.Generation = g }
		}, func() (status.Setter, func(int64)) {
			w := &bareWidget{}
			return accessBare(w), func(g int64) { w.Generation = g }
		}},
		{"without observedGeneration", func() (status.Setter, func(int64)) {
			g := &gadget{}
			return g, func(gen int64) { g.Generation = gen }
		}, func() (status.Setter, func(int64)) {
			w := &bareWidget{}
			return status.Access(w, &w.Status.Conditions), func(g int64) { w.Generation = g }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, setM := tc.method()
			a, setA := tc.access()
			if _, ok := any(&bareWidget{}).(status.Getter); ok {
				t.Fatal("bareWidget has condition methods; the test proves nothing")
			}
			_, mOG := m.(status.ObservedGenerationAccessor)
			_, aOG := a.(status.ObservedGenerationAccessor)
			if mOG != aOG {
				t.Fatalf("ObservedGenerationAccessor: method form %v, accessor form %v", mOG, aOG)
			}
			for _, st := range steps {
				setM(st.generation)
				setA(st.generation)
				mBefore, aBefore := m.GetConditions(), a.GetConditions()
				mOut := outcomeOf(m, st.do(m), mBefore)
				aOut := outcomeOf(a, st.do(a), aBefore)
				opt := cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")
				if diff := cmp.Diff(mOut, aOut, opt); diff != "" {
					t.Fatalf("%s: method form (-) and accessor form (+) differ:\n%s", st.name, diff)
				}
			}
		})
	}
}

// AccessFuncs reads and writes conditions through functions: here a
// status that keeps them in a map, as another module's type might.
func TestAccessFuncs(t *testing.T) {
	w := &bareWidget{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	stored := map[string]metav1.Condition{}
	var order []string
	s := status.AccessFuncs(w, func() []metav1.Condition {
		out := make([]metav1.Condition, 0, len(order))
		for _, t := range order {
			out = append(out, stored[t])
		}
		return out
	}, func(c []metav1.Condition) {
		clear(stored)
		order = order[:0]
		for _, x := range c {
			stored[x.Type], order = x, append(order, x.Type)
		}
	})
	status.SetError(s, koperrors.Terminal(fmt.Errorf("bad spec")))
	if !status.IsTrue(s, status.Stalled) || stored[status.Ready].Status != metav1.ConditionFalse || stored[status.Ready].ObservedGeneration != 2 {
		t.Errorf("conditions %+v, want Stalled=True and Ready=False at generation 2", stored)
	}
	if !status.IsCurrent(s) {
		t.Error("not current after a terminal error: without observedGeneration, Stalled at this generation counts")
	}
}

// Against the API server: a custom resource whose Go type has no
// condition methods gets Ready, Reconciling and Stalled, observedGeneration
// and kept transition times through the accessor form, written by the
// Patcher (given the accessor) only when they change.
func TestAccessorAgainstTheAPIServer(t *testing.T) {
	ns := cluster.Namespace(t)
	s := runtime.NewScheme()
	s.AddKnownTypeWithName(widget.GroupVersion.WithKind("Widget"), &bareWidget{})
	metav1.AddToGroupVersion(s, widget.GroupVersion)
	c, err := client.New(cluster.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	w := &bareWidget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bare"}, Spec: widget.WidgetSpec{Size: 1}}
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}

	// reconcile reads the object as a reconciler would, runs work between
	// Begin and Finish through a fresh accessor, patches the status, and
	// returns the object as stored.
	reconcile := func(work func(status.Setter) error) (sent bool, stored *bareWidget) {
		t.Helper()
		var got bareWidget
		if err := c.Get(ctx, client.ObjectKeyFromObject(w), &got); err != nil {
			t.Fatal(err)
		}
		acc := accessBare(&got)
		p := status.NewPatcher(acc)
		read := status.Begin(acc)
		status.Finish(acc, read, work(acc))
		sent, err := p.Patch(ctx, c, acc, client.FieldOwner(owner))
		if err != nil {
			t.Fatal(err)
		}
		stored = &bareWidget{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(w), stored); err != nil {
			t.Fatal(err)
		}
		return sent, stored
	}
	cond := func(w *bareWidget, typ string) *metav1.Condition { return status.Get(accessBare(w), typ) }
	want := func(w *bareWidget, observed int64, conds ...string) {
		t.Helper()
		var got []string
		for _, c := range w.Status.Conditions {
			got = append(got, c.Type+"="+string(c.Status))
		}
		if diff := cmp.Diff(conds, got); diff != "" || w.Status.ObservedGeneration != observed {
			t.Fatalf("conditions (-want +got):\n%s\nobservedGeneration %d, want %d", diff, w.Status.ObservedGeneration, observed)
		}
	}

	t.Log("rolling out: Reconciling, Ready=Unknown, generation 1 acted on")
	sent, got := reconcile(func(s status.Setter) error {
		status.MarkReconciling(s, "RollingOut", "1/3 replicas")
		return nil
	})
	want(got, 1, "Ready=Unknown", "Reconciling=True")
	if !sent {
		t.Error("no status write for new conditions")
	}
	unknownAt := cond(got, status.Ready).LastTransitionTime

	time.Sleep(1100 * time.Millisecond) // transition times have a second's precision
	t.Log("done: Ready=True, Reconciling gone")
	_, got = reconcile(func(status.Setter) error { return nil })
	want(got, 1, "Ready=True")
	readyAt := cond(got, status.Ready).LastTransitionTime
	if !readyAt.After(unknownAt.Time) {
		t.Errorf("Ready moved Unknown -> True, but its lastTransitionTime stayed %s", readyAt)
	}
	if !status.IsCurrent(accessBare(got)) {
		t.Error("not current after a success")
	}

	time.Sleep(1100 * time.Millisecond)
	t.Log("the same outcome again: nothing to write, transition time kept")
	sent, got = reconcile(func(status.Setter) error { return nil })
	want(got, 1, "Ready=True")
	if sent {
		t.Error("a status write for an unchanged status")
	}
	if at := cond(got, status.Ready).LastTransitionTime; !at.Equal(&readyAt) {
		t.Errorf("Ready's lastTransitionTime moved from %s to %s without a transition", readyAt, at)
	}

	t.Log("a new generation that cannot work: Stalled, Ready=False, the generation observed")
	got.Spec.Size = -1
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	_, got = reconcile(func(status.Setter) error {
		return koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "spec.size -1: must be positive"))
	})
	want(got, 2, "Ready=False", "Stalled=True")
	if r := cond(got, status.Ready); r.Reason != "Invalid" || r.ObservedGeneration != 2 {
		t.Errorf("Ready %+v, want reason Invalid at generation 2", r)
	}
	falseAt := cond(got, status.Ready).LastTransitionTime

	time.Sleep(1100 * time.Millisecond)
	t.Log("a retryable failure: Reconciling instead of Stalled, Ready=False keeps its transition time")
	_, got = reconcile(func(status.Setter) error { return koperrors.Errorf(koperrors.Unavailable, "registry down") })
	want(got, 2, "Ready=False", "Reconciling=True")
	if at := cond(got, status.Ready).LastTransitionTime; !at.Equal(&falseAt) {
		t.Errorf("Ready stayed False, but its lastTransitionTime moved from %s to %s", falseAt, at)
	}
}

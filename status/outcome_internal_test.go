package status

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	koperrors "github.com/kopgo/kopgo/errors"
)

// state is what a test reads of the summary conditions: each condition as
// "Status/Reason", "-" when absent.
type state struct{ Ready, Reconciling, Stalled string }

func stateOf(conds []metav1.Condition) state {
	get := func(t string) string {
		for _, c := range conds {
			if c.Type == t {
				return string(c.Status) + "/" + c.Reason
			}
		}
		return "-"
	}
	return state{get(Ready), get(Reconciling), get(Stalled)}
}

// TestDecide covers every outcome × what the reconciler set × every prior
// state (cluster-api's util/conditions style). What the reconciler set and
// the outcome decide the conditions; the prior state decides only
// lastTransitionTime, which a condition keeps exactly when its status is
// the one it had as read.
func TestDecide(t *testing.T) {
	const gen = 7
	then := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	now := metav1.NewTime(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	c := func(t string, s metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: t, Status: s, Reason: reason, Message: reason + " message", ObservedGeneration: 3, LastTransitionTime: then}
	}
	priors := map[string][]metav1.Condition{
		"none":        nil,
		"ready":       {c(Ready, metav1.ConditionTrue, "Deployed")},
		"failing":     {c(Ready, metav1.ConditionFalse, "Unavailable"), c(Reconciling, metav1.ConditionTrue, "Unavailable")},
		"stalled":     {c(Ready, metav1.ConditionFalse, "Invalid"), c(Stalled, metav1.ConditionTrue, "Invalid")},
		"progressing": {c(Ready, metav1.ConditionUnknown, "RollingOut"), c(Reconciling, metav1.ConditionTrue, "RollingOut")},
		"custom only": {c("DatabaseReady", metav1.ConditionTrue, "Up")},
	}
	// What the reconciler does to the object it got (Reconciling and
	// Stalled already taken out by Begin).
	sets := map[string]func(o *obj){
		"nothing":     func(*obj) {},
		"ready":       func(o *obj) { MarkReady(o, "Deployed", "at http://web") },
		"reconciling": func(o *obj) { MarkReconciling(o, "RollingOut", "1 of 3") },
		"not ready":   func(o *obj) { MarkNotReady(o, "Waiting", "for the database") },
		"stalled":     func(o *obj) { MarkStalled(o, "Invalid", "spec.port") },
		"custom": func(o *obj) {
			Set(o, metav1.Condition{Type: "DatabaseReady", Status: metav1.ConditionFalse, Reason: "Down"})
		},
		"bare ready off": func(o *obj) { Set(o, metav1.Condition{Type: Ready, Status: metav1.ConditionFalse, Reason: "Off"}) },
	}
	gk := schema.GroupKind{Kind: "Service"}
	outcomes := map[string]error{
		"success":   nil,
		"retryable": koperrors.Errorf(koperrors.Unavailable, "registry down"),
		"terminal":  koperrors.Terminal(fmt.Errorf("spec.image: bad")),
		"422 field": apierrors.NewInvalid(gk, "web", field.ErrorList{field.Invalid(field.NewPath("spec", "ports"), 0, "bad")}),
		"422 bare":  apierrors.NewInvalid(gk, "web", nil),
		// A reason of the reconciler's own, or a provider's 401, is the
		// reason instead of the kind.
		"terminal with reason":  fmt.Errorf("create zone: %w", koperrors.Terminal(koperrors.WithReason(fmt.Errorf("3 of 3 zones in use"), "QuotaExceeded"))),
		"retryable with reason": koperrors.WithReason(koperrors.Errorf(koperrors.Unavailable, "provider down"), "ProviderDown"),
		"provider 401":          koperrors.FromHTTP(&http.Response{StatusCode: http.StatusUnauthorized}),
	}
	type want struct {
		state   state
		settled bool
	}
	failing := want{state{"False/Unavailable", "True/Unavailable", "-"}, false}
	stalled := want{state{"False/Internal", "-", "True/Internal"}, true}
	invalid := want{state{"False/Invalid", "-", "True/Invalid"}, true}
	invalidRetry := want{state{"False/Invalid", "True/Invalid", "-"}, false}
	quota := want{state{"False/QuotaExceeded", "-", "True/QuotaExceeded"}, true}
	providerDown := want{state{"False/ProviderDown", "True/ProviderDown", "-"}, false}
	unauthorized := want{state{"False/Unauthorized", "-", "True/Unauthorized"}, true}
	// The table: outcome, then what the reconciler set.
	wants := map[string]map[string]want{
		"success": {
			"nothing":        {state{"True/Succeeded", "-", "-"}, true},
			"ready":          {state{"True/Deployed", "-", "-"}, true},
			"reconciling":    {state{"Unknown/RollingOut", "True/RollingOut", "-"}, true},
			"not ready":      {state{"False/Waiting", "True/Waiting", "-"}, true},
			"stalled":        {state{"False/Invalid", "-", "True/Invalid"}, true},
			"custom":         {state{"True/Succeeded", "-", "-"}, true},
			"bare ready off": {state{"True/Succeeded", "-", "-"}, true},
		},
		"retryable":             {"nothing": failing, "ready": failing, "reconciling": failing, "not ready": failing, "stalled": failing, "custom": failing, "bare ready off": failing},
		"terminal":              {"nothing": stalled, "ready": stalled, "reconciling": stalled, "not ready": stalled, "stalled": stalled, "custom": stalled, "bare ready off": stalled},
		"422 field":             {"nothing": invalid, "ready": invalid, "reconciling": invalid, "not ready": invalid, "stalled": invalid, "custom": invalid, "bare ready off": invalid},
		"422 bare":              {"nothing": invalidRetry, "ready": invalidRetry, "reconciling": invalidRetry, "not ready": invalidRetry, "stalled": invalidRetry, "custom": invalidRetry, "bare ready off": invalidRetry},
		"terminal with reason":  {"nothing": quota, "ready": quota, "reconciling": quota, "not ready": quota, "stalled": quota, "custom": quota, "bare ready off": quota},
		"retryable with reason": {"nothing": providerDown, "ready": providerDown, "reconciling": providerDown, "not ready": providerDown, "stalled": providerDown, "custom": providerDown, "bare ready off": providerDown},
		"provider 401":          {"nothing": unauthorized, "ready": unauthorized, "reconciling": unauthorized, "not ready": unauthorized, "stalled": unauthorized, "custom": unauthorized, "bare ready off": unauthorized},
	}
	n := 0
	for oname, err := range outcomes {
		for sname, set := range sets {
			for pname, prior := range priors {
				n++
				t.Run(oname+"/"+sname+"/"+pname, func(t *testing.T) {
					o := &obj{conds: append([]metav1.Condition(nil), prior...)}
					o.SetGeneration(gen)
					read := Begin(o)
					set(o)
					got, settled := decide(read, o.conds, gen, err, now)
					w := wants[oname][sname]
					if w.state.Ready == "True/Succeeded" && pname == "ready" && sname != "bare ready off" {
						// A True Ready left as read keeps its reason.
						w.state.Ready = "True/Deployed"
					}
					if diff := cmp.Diff(w.state, stateOf(got)); diff != "" {
						t.Errorf("conditions (-want +got):\n%s", diff)
					}
					if settled != w.settled {
						t.Errorf("settled = %t, want %t", settled, w.settled)
					}
					for _, g := range got {
						var before *metav1.Condition
						for i := range read {
							if read[i].Type == g.Type {
								before = &read[i]
							}
						}
						// Ready between False and Unknown keeps its time too.
						keep := before != nil && held(g.Type, before.Status, g.Status)
						switch {
						case keep && !g.LastTransitionTime.Equal(&before.LastTransitionTime):
							t.Errorf("%s kept its status %s but lastTransitionTime moved to %v", g.Type, g.Status, g.LastTransitionTime)
						case !keep && !g.LastTransitionTime.After(then.Time):
							t.Errorf("%s moved to %s but lastTransitionTime is %v, want a new time", g.Type, g.Status, g.LastTransitionTime)
						}
						if isSummary(g.Type) && g.ObservedGeneration != gen {
							t.Errorf("%s observedGeneration %d, want %d", g.Type, g.ObservedGeneration, gen)
						}
					}
					// Other conditions are the reconciler's: kept as set.
					if sname == "custom" && stateOfType(got, "DatabaseReady") != "False/Down" {
						t.Errorf("DatabaseReady = %s, want False/Down", stateOfType(got, "DatabaseReady"))
					}
					if sname != "custom" && pname == "custom only" && stateOfType(got, "DatabaseReady") != "True/Up" {
						t.Errorf("DatabaseReady = %s, want True/Up kept", stateOfType(got, "DatabaseReady"))
					}
					// Deciding again from what was stored changes nothing:
					// no write feeds another.
					again, _ := decide(got, withoutProgressFor(got, sname, err), gen, err, metav1.NewTime(now.Add(time.Hour)))
					if diff := cmp.Diff(got, again); diff != "" && err == nil {
						t.Errorf("second decision differs (-first +second):\n%s", diff)
					}
				})
			}
		}
	}
	if n != len(outcomes)*len(sets)*len(priors) {
		t.Fatalf("ran %d cases", n)
	}
}

// withoutProgressFor is what the next reconcile's reconciler leaves when it
// reports the same as this one: the stored conditions with Reconciling and
// Stalled removed unless it sets them again.
func withoutProgressFor(stored []metav1.Condition, set string, err error) []metav1.Condition {
	o := &obj{conds: append([]metav1.Condition(nil), stored...)}
	o.SetGeneration(7)
	Begin(o)
	if err == nil {
		switch set {
		case "reconciling", "not ready", "stalled":
			for _, c := range stored {
				if isProgress(c) {
					o.conds = append(o.conds, c)
				}
			}
		}
	}
	return o.conds
}

func stateOfType(conds []metav1.Condition, t string) string {
	for _, c := range conds {
		if c.Type == t {
			return string(c.Status) + "/" + c.Reason
		}
	}
	return "-"
}

// obj is the smallest Setter.
type obj struct {
	metav1.ObjectMeta
	metav1.TypeMeta
	conds []metav1.Condition
}

func (o *obj) GetConditions() []metav1.Condition  { return o.conds }
func (o *obj) SetConditions(c []metav1.Condition) { o.conds = c }
func (o *obj) DeepCopyObject() runtime.Object {
	c := *o
	c.conds = append([]metav1.Condition(nil), o.conds...)
	return &c
}

// A reconcile that reads the object from a cache which has not seen this
// process' last status write yet keeps the transition time of that write
// for a condition that moved to the same status: the status then equals
// what was written, and costs no second write.
func TestFinishKeepsTheWrittenTransitionOnAStaleRead(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	o := &obj{conds: []metav1.Condition{{Type: Ready, Status: metav1.ConditionUnknown, Reason: "RollingOut", LastTransitionTime: metav1.NewTime(then.Add(-time.Hour))}}}
	o.SetUID("stale-read-uid")
	o.SetResourceVersion("4")
	o.SetGeneration(1)
	writes.put(lastWrite{uid: "stale-read-uid", resourceVersion: "5", status: map[string]any{"conditions": []any{
		map[string]any{"type": "Ready", "status": "True", "reason": "Succeeded", "lastTransitionTime": then.UTC().Format(time.RFC3339)},
	}}})
	defer writes.forget("stale-read-uid")
	Finish(o, Begin(o), nil)
	if r := o.conds[0]; r.Status != metav1.ConditionTrue || !r.LastTransitionTime.Equal(&then) {
		t.Errorf("Ready = %+v, want True since %v, the written transition", r, then)
	}
	// Read up to date (the write's resourceVersion): the rule of Finish alone.
	o.conds = []metav1.Condition{{Type: Ready, Status: metav1.ConditionUnknown, Reason: "RollingOut", LastTransitionTime: metav1.NewTime(then.Add(-time.Hour))}}
	o.SetResourceVersion("5")
	Finish(o, Begin(o), nil)
	if r := o.conds[0]; r.LastTransitionTime.Equal(&then) {
		t.Errorf("an up-to-date read took the written time: %+v", r)
	}
}

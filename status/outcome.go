package status

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/truncate"
)

// Begin prepares obj for one reconcile and returns its conditions as read.
// It removes [Reconciling] and [Stalled] from obj: they describe one
// reconcile, so they stand afterwards only if the reconciler sets them
// again (status.MarkReconciling while a rollout goes on, status.MarkStalled
// for a spec it cannot act on). Pass the returned conditions to [Finish].
//
// kopgo's reconcile loop calls Begin before Reconcile and Finish after it;
// a plain controller-runtime reconciler does the same around its work.
func Begin(obj Setter) (read []metav1.Condition) {
	read = slices.Clone(obj.GetConditions())
	if slices.ContainsFunc(read, isProgress) {
		obj.SetConditions(slices.DeleteFunc(slices.Clone(read), isProgress))
	}
	return read
}

// Finish records the outcome of one reconcile in obj's conditions and
// status.observedGeneration, and reports whether either differs from what
// was read. read are
// the conditions returned by [Begin]; err is the reconcile's failure, or
// nil. When to come back (a requeue) is not an input: a requeue never
// changes conditions, so Ready reflects the work, not the schedule.
//
// The rules, one place for kopgo's loop, reconciler.Sync and plain
// reconcilers alike:
//
//   - err is terminal ([koperrors.IsTerminal]: marked Terminal, a 422
//     naming a field, or a verdict that says it is terminal, such as the
//     Applier's refusal to take over an object someone else holds, or a
//     field another field manager owns, apply.ConflictError):
//     Stalled=True and Ready=False with the error's reason
//     ([koperrors.ReasonOf]: the one it was marked with by
//     [koperrors.WithReason], else its kind) as reason and its text as
//     message, Reconciling removed; the generation is settled, so
//     observedGeneration is stamped.
//   - any other err: Ready=False and Reconciling=True with the error's
//     reason and text, Stalled removed; observedGeneration stays behind,
//     so the generation is not [IsCurrent] and is retried.
//   - nil, and the reconciler set Stalled: its report stands (Ready as it
//     set it, False by [MarkStalled]); observedGeneration is stamped.
//   - nil, and the reconciler set Reconciling: its report stands (Ready
//     Unknown or False, as it set it); observedGeneration is stamped: the
//     controller has acted on this generation (Flux's convention), and
//     kstatus reads Reconciling=True as in progress anyway.
//   - nil otherwise: Ready=True, keeping the reconciler's reason and message
//     when it set Ready=True itself and [ReasonSucceeded] with no message
//     otherwise; observedGeneration is stamped.
//
// Conditions of other types are left as the reconciler set them. Every
// condition keeps its lastTransitionTime when its status is the one it had
// as read, whatever happened to it in between (removed and set again,
// through another status and back), and Ready keeps it when it moves
// between False and Unknown (it was not Ready and still is not); a
// condition whose status moved otherwise transitions now. Ready, Reconciling and Stalled carry the object's
// generation as their observedGeneration, and conditions keep the order of
// [Set].
func Finish(obj Setter, read []metav1.Condition, err error) bool {
	conds, settled := decide(read, obj.GetConditions(), obj.GetGeneration(), err, metav1.Now())
	keepWrittenTransitions(obj, read, conds)
	obj.SetConditions(conds)
	changed := !slices.EqualFunc(conds, read, sameCondition)
	if settled {
		changed = SetObservedGeneration(obj) || changed
	}
	return changed
}

// SetError records the outcome err of a reconcile that reported nothing
// else, and reports whether obj's status changed: [Begin] and [Finish] in
// one call, so a Reconciling or Stalled condition left by an earlier
// reconcile does not survive a success. nil is Ready=True; a terminal error
// is Stalled; any other error is Ready=False with Reconciling=True (the
// rules are [Finish]'s).
//
// The reason of an error is the name of its [koperrors.Kind] ("NotFound",
// "Invalid", "Unavailable", "Internal", ...), a closed set of valid reasons
// that alerts and `kubectl wait` can match; the message is the error's
// text, which names the operation and the object ("apply Deployment
// default/web: ..."), cut to the API's 32768 bytes. status.observedGeneration
// is touched only when obj implements [ObservedGenerationAccessor].
func SetError(obj Setter, err error) bool {
	return Finish(obj, Begin(obj), err)
}

// decide is the one function that owns Ready, Reconciling, Stalled and
// lastTransitionTime: from the conditions as read, those the reconciler
// left (Reconciling and Stalled among them only if it set them), the
// object's generation and the outcome, it returns the conditions to store
// and whether the generation is settled (observedGeneration to be
// stamped). It is pure: now is the time a transition gets.
func decide(read, set []metav1.Condition, generation int64, err error, now metav1.Time) ([]metav1.Condition, bool) {
	out := slices.Clone(set)
	settled := true
	put := func(t string, s metav1.ConditionStatus, reason, message string) {
		c := metav1.Condition{Type: t, Status: s, Reason: reason, Message: message}
		if i := slices.IndexFunc(out, func(o metav1.Condition) bool { return o.Type == t }); i >= 0 {
			out[i] = c
		} else {
			out = append(out, c)
		}
	}
	drop := func(t string) {
		out = slices.DeleteFunc(out, func(o metav1.Condition) bool { return o.Type == t })
	}
	find := func(t string) *metav1.Condition {
		if i := slices.IndexFunc(out, func(o metav1.Condition) bool { return o.Type == t }); i >= 0 {
			return &out[i]
		}
		return nil
	}
	switch {
	case koperrors.IsTerminal(err):
		put(Stalled, metav1.ConditionTrue, reasonOf(err), err.Error())
		put(Ready, metav1.ConditionFalse, reasonOf(err), err.Error())
		drop(Reconciling)
	case err != nil:
		put(Ready, metav1.ConditionFalse, reasonOf(err), err.Error())
		put(Reconciling, metav1.ConditionTrue, reasonOf(err), err.Error())
		drop(Stalled)
		settled = false
	case isSet(find(Stalled)):
		if r := find(Ready); r == nil || r.Status == metav1.ConditionTrue {
			s := find(Stalled)
			put(Ready, metav1.ConditionFalse, s.Reason, s.Message)
		}
	case isSet(find(Reconciling)):
		if r := find(Ready); r == nil || r.Status == metav1.ConditionTrue {
			c := find(Reconciling)
			put(Ready, metav1.ConditionUnknown, c.Reason, c.Message)
		}
	default:
		drop(Reconciling)
		drop(Stalled)
		if r := find(Ready); r == nil || r.Status != metav1.ConditionTrue {
			put(Ready, metav1.ConditionTrue, ReasonSucceeded, "")
		}
	}
	for i := range out {
		c := &out[i]
		if isSummary(c.Type) {
			c.ObservedGeneration = generation
		}
		if c.Reason == "" {
			c.Reason = reasonUnspecified
		}
		c.Message = truncate.String(c.Message, maxMessageBytes)
		c.LastTransitionTime = transitionTime(read, *c, now)
	}
	slices.SortStableFunc(out, compare)
	return out, settled
}

// transitionTime is the one rule for lastTransitionTime when [Finish]
// stores conditions: a condition whose status is the one it had as read
// (for Ready: True as read and True now, or not True as read and not True
// now, see held) keeps that condition's time; one whose status moved, or that is new,
// keeps the time [Set] gave it when it was set, and otherwise transitions
// now (at the second, the precision the API keeps).
func transitionTime(before []metav1.Condition, c metav1.Condition, now metav1.Time) metav1.Time {
	i := slices.IndexFunc(before, func(o metav1.Condition) bool { return o.Type == c.Type })
	switch {
	case i >= 0 && held(c.Type, before[i].Status, c.Status):
		return before[i].LastTransitionTime
	case !c.LastTransitionTime.IsZero() && (i < 0 || !c.LastTransitionTime.Equal(&before[i].LastTransitionTime)):
		return c.LastTransitionTime
	}
	return metav1.NewTime(now.Truncate(time.Second))
}

// isSet reports whether an abnormal-true condition is present and True.
func isSet(c *metav1.Condition) bool { return c != nil && c.Status == metav1.ConditionTrue }

func isProgress(c metav1.Condition) bool { return c.Type == Reconciling || c.Type == Stalled }

func isSummary(t string) bool { return t == Ready || t == Reconciling || t == Stalled }

// sameCondition compares everything a status write would carry.
func sameCondition(a, b metav1.Condition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.ObservedGeneration == b.ObservedGeneration && a.LastTransitionTime.Equal(&b.LastTransitionTime)
}

// reasonOf is the condition reason for err: [koperrors.ReasonOf], the
// reason it was marked with ([koperrors.WithReason], or "Unauthorized"
// from [koperrors.FromHTTP]) or else the name of its [koperrors.Kind];
// always a valid reason. It is "" for nil.
func reasonOf(err error) string {
	return koperrors.ReasonOf(err)
}

// keepWrittenTransitions gives a condition that moved since read the
// lastTransitionTime this process last wrote for it, when that write had
// the same status and obj was read from a cache that has not caught up
// with the write yet (its resourceVersion is not the write's). Without it
// a reconcile on a stale read would date the same transition anew, and the
// status would differ from what was written by that time alone: one more
// write for nothing.
func keepWrittenTransitions(obj Setter, read, conds []metav1.Condition) {
	last, ok := writes.get(obj.GetUID())
	if !ok || last.resourceVersion == obj.GetResourceVersion() {
		return
	}
	written := writtenConditions(last.status)
	for i := range conds {
		c := &conds[i]
		if j := slices.IndexFunc(read, func(o metav1.Condition) bool { return o.Type == c.Type }); j >= 0 && held(c.Type, read[j].Status, c.Status) {
			continue // did not move
		}
		if w, ok := written[c.Type]; ok && held(c.Type, w.Status, c.Status) {
			c.LastTransitionTime = w.LastTransitionTime
		}
	}
}

// writtenConditions reads the conditions out of a status as the write log
// keeps it (JSON-shaped data).
func writtenConditions(st any) map[string]metav1.Condition {
	m, ok := st.(map[string]any)
	if !ok {
		return nil
	}
	list, _ := m["conditions"].([]any)
	out := make(map[string]metav1.Condition, len(list))
	for _, item := range list {
		c, ok := item.(map[string]any)
		if !ok {
			continue
		}
		t, _ := c["type"].(string)
		st, _ := c["status"].(string)
		ltt, _ := c["lastTransitionTime"].(string)
		var when metav1.Time
		if err := when.UnmarshalQueryParameter(ltt); err != nil || t == "" {
			continue
		}
		out[t] = metav1.Condition{Type: t, Status: metav1.ConditionStatus(st), LastTransitionTime: when}
	}
	return out
}

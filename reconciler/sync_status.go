package reconciler

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/status"
)

// maxNote is the longest event note the API server accepts
// (events.k8s.io/v1: 1 kB).
const maxNote = 1024

// recordEvent records the one event of this reconcile: what it changed.
func (r *syncRun[T]) recordEvent() {
	var parts []string
	for _, v := range verbs {
		if refs := r.changes[v]; len(refs) > 0 {
			parts = append(parts, v+" "+strings.Join(refs, ", "))
		}
	}
	if len(parts) == 0 || r.env.Recorder == nil {
		return
	}
	r.env.Recorder.Normal(r.parent, nil, "Synced", "Sync", cutNote(strings.Join(parts, "; ")))
}

// cutNote shortens a note to maxNote bytes at a child boundary.
func cutNote(note string) string {
	const more = " and more"
	if len(note) <= maxNote {
		return note
	}
	cut := note[:maxNote-len(more)]
	if i := strings.LastIndexAny(cut, ",;"); i > 0 {
		cut = cut[:i]
	}
	return cut + more
}

// summarise sets the parent's Ready/Reconciling from its children: a
// failed child makes it Ready=False, a waiting or converging one
// Reconciling, and when every child is ready, Ready=True naming them
// (unless the sync function set a Ready=True of its own).
func (r *syncRun[T]) summarise(parent status.Setter) {
	switch {
	case len(r.failed) > 0 && r.failedFinal:
		status.MarkStalled(parent, "ChildFailed", listSome(r.failed))
	case len(r.failed) > 0:
		status.MarkNotReady(parent, "ChildFailed", listSome(r.failed))
	case len(r.waits) > 0:
		msgs := make([]string, len(r.waits))
		for i, w := range r.waits {
			msgs[i] = w.message
		}
		status.MarkReconciling(parent, r.waits[0].reason, listSome(msgs))
	case len(r.progressing) > 0:
		status.MarkReconciling(parent, "ChildProgressing", listSome(r.progressing))
	case len(r.errs) == 0 && len(r.refusals) == 0 && !ownReady(parent):
		n := len(r.readyMsgs)
		status.MarkReady(parent, ReasonChildrenReady, fmt.Sprintf("%d of %d children ready: %s", n, n, strings.Join(r.readyMsgs, "; ")))
	}
}

// ReasonChildrenReady is the reason of the Ready=True with which Sync
// reports every child ready ("3 of 3 children ready: StatefulSet db: 3 of
// 3 replicas ready; Service db; Job migrate-7: succeeded").
const ReasonChildrenReady = "ChildrenReady"

// ownReady reports whether parent carries a Ready=True that is not Sync's
// or the loop's: the sync function's own, which stands.
func ownReady(parent status.Setter) bool {
	c := status.Get(parent, status.Ready)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason != ReasonChildrenReady && c.Reason != status.ReasonSucceeded
}

// readyNote names a ready child for the parent's Ready message: what its
// readiness says when that is more than "nothing to wait for".
func readyNote(ref kopmeta.ObjectRef, rd status.Readiness) string {
	name := ref.Kind + " " + ref.Name
	if msg, ok := strings.CutPrefix(rd.Message, name+": "); ok && !strings.Contains(msg, "nothing to wait for") {
		return name + ": " + msg
	}
	return name
}

// listSome joins the first three messages and counts the rest.
func listSome(msgs []string) string {
	const some = 3
	if len(msgs) <= some {
		return strings.Join(msgs, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(msgs[:some], "; "), len(msgs)-some)
}

// immutable reports whether err is the API server refusing an update
// because fields that cannot change would change: a 422 whose every cause
// says so. The API server has no reason code for it, so the causes'
// messages are read (as kubectl and Flux do): "field is immutable" (a Job's
// template, a Deployment's selector), "may not change once set" (a
// Service's clusterIP), "updates to ... are forbidden" (a StatefulSet's
// spec), CEL's "is immutable". A 422 with any other cause is an invalid
// child, which recreating would only lose.
func immutable(err error) bool {
	se, ok := errors.AsType[*apierrors.StatusError](err)
	if !ok || !apierrors.IsInvalid(se) {
		return false
	}
	causes := causesOf(se)
	if len(causes) == 0 {
		return immutableMessage(se.ErrStatus.Message)
	}
	for _, c := range causes {
		if !immutableMessage(c.Message) {
			return false
		}
	}
	return true
}

func causesOf(se *apierrors.StatusError) []metav1.StatusCause {
	if se.ErrStatus.Details == nil {
		return nil
	}
	return se.ErrStatus.Details.Causes
}

func immutableMessage(m string) bool {
	m = strings.ToLower(m)
	return strings.Contains(m, "immutable") || strings.Contains(m, "may not change") ||
		strings.Contains(m, "cannot be changed") || (strings.Contains(m, "updates to") && strings.Contains(m, "forbidden"))
}

// immutableCauses renders an immutable error's causes shortly: "field:
// reason", without the value (a pod template runs to kilobytes).
func immutableCauses(err error) string {
	se, ok := errors.AsType[*apierrors.StatusError](err)
	if !ok {
		return err.Error()
	}
	causes := causesOf(se)
	if len(causes) == 0 {
		return se.ErrStatus.Message
	}
	out := make([]string, 0, len(causes))
	for _, c := range causes {
		msg := c.Message
		if i := strings.LastIndex(msg, ": "); i >= 0 && strings.HasPrefix(msg, "Invalid value: ") {
			msg = msg[i+2:]
		}
		out = append(out, c.Field+": "+msg)
	}
	return strings.Join(out, "; ")
}

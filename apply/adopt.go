package apply

import (
	"context"
	stderrors "errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// AdoptOrphans lets an apply whose intent carries a controller reference
// (an owner reference with controller: true) take over an existing object
// that no controller controls: an orphan. Without it such an apply is
// refused with a [*TakeoverError], because the controller reference would
// make the object the owner's, and Kubernetes' garbage collector would
// delete it with the owner, although someone else created it. An object
// that another controller controls is never taken over, with or without
// AdoptOrphans.
//
//	res, err := a.Apply(ctx, intent, apply.AdoptOrphans(true))
//
// AdoptOrphans is a client.ApplyOption so that it travels with the
// Applier's other options. controller-runtime's own client never refuses a
// takeover, and ignores it.
type AdoptOrphans bool

var _ client.ApplyOption = AdoptOrphans(false)

// ApplyToApply implements client.ApplyOption. It sets nothing in
// client.ApplyOptions: the [Applier] reads AdoptOrphans from the options
// themselves.
func (AdoptOrphans) ApplyToApply(*client.ApplyOptions) {}

// adoptsOrphans reports whether opts allow adopting orphans (the last
// AdoptOrphans wins).
func adoptsOrphans(opts []client.ApplyOption) bool {
	adopt := false
	for _, o := range opts {
		if a, ok := o.(AdoptOrphans); ok {
			adopt = bool(a)
		}
	}
	return adopt
}

// TakeoverError is the cause of an apply the [Applier] refused, or undid,
// because it would have taken over an object it did not create: its intent
// carries a controller reference (Owner), and the object of that name
// exists with another controller (Controller), or with none and the apply
// did not ask for [AdoptOrphans]. It is wrapped in a koperrors error of
// Kind Invalid that names the object: retrying cannot help until the object
// is renamed or removed, or (an orphan) adopted on purpose.
//
// When a dry run of the refused apply met fields another field manager
// owns, the error says so as well, and its chain holds that
// [*ConflictError] ([Conflicts] returns its fields), so that both are
// known at once.
//
// # Terminal
//
// A refused takeover is a verdict about the spec (the name is someone
// else's), so a TakeoverError is terminal wherever it is met:
// koperrors.IsTerminal reports it, status.SetError and status.Finish show
// Stalled=True with its message (which names the holder), reconciler.Result
// hands it to controller-runtime as terminal, and kopgo's loop retries it
// only on its Stalled interval, as reconciler.Sync's own refusals. It says
// so through errors.Is(err, reconcile.TerminalError(nil)), controller-runtime's
// own test, so that a plain reconciler that returns it unchanged is not
// retried either. Two cases are not verdicts and are retried as any
// failure: an object that Appeared during the apply (the next apply sees
// it and refuses it for good, naming its writer), and an object still
// controlled by an earlier owner of the same kind and name, since deleted,
// which the garbage collector is about to remove.
type TakeoverError struct {
	// Owner is the controller reference the apply would have set.
	Owner metav1.OwnerReference
	// Controller is the object's controller, nil for an orphan.
	Controller *metav1.OwnerReference
	// Appeared is true when the object did not exist a moment before the
	// apply (server-side apply has no create-only precondition), so that
	// the apply took it over and the Applier removed its controller
	// reference again.
	Appeared bool
	// Manager names the holder of an object without a controller: the
	// field manager that created it (Appeared), or one that wrote it (an
	// orphan the apply refused); "" when the object's managedFields name
	// none but the Applier's own.
	Manager string

	conflict *ConflictError
	// writers are the field managers of the object's main resource, for
	// Manager.
	writers []string
}

// Is reports whether target is controller-runtime's terminal marker
// (reconcile.TerminalError(nil)) and the refusal is a verdict (see
// Terminal above).
func (e *TakeoverError) Is(target error) bool {
	return !e.Appeared && !e.earlierOwner() && stderrors.Is(reconcile.TerminalError(nil), target)
}

// earlierOwner reports whether the object is controlled by an earlier
// object of the owner's kind and name (another UID): the owner's
// predecessor, since deleted.
func (e *TakeoverError) earlierOwner() bool {
	return e.Controller != nil && e.Controller.Kind == e.Owner.Kind && e.Controller.Name == e.Owner.Name && e.Controller.APIVersion == e.Owner.APIVersion
}

// Error says what the object is, and what to do about it.
func (e *TakeoverError) Error() string {
	var b strings.Builder
	switch {
	case e.Appeared:
		fmt.Fprintf(&b, "the object was created by %q while this apply created it, and the apply took it over; its controller reference (%s %s) was removed again: the Applier never takes over an object it did not create", e.Manager, e.Owner.Kind, e.Owner.Name)
	case e.earlierOwner():
		fmt.Fprintf(&b, "the object is controlled by an earlier %s %s (uid %s), since deleted: wait for the garbage collector to delete it",
			e.Controller.Kind, e.Controller.Name, e.Controller.UID)
	case e.Controller != nil:
		fmt.Fprintf(&b, "the object is controlled by %s %s (uid %s), not by %s %s: the Applier never takes over an object another controller controls; rename the object or remove the other one",
			e.Controller.Kind, e.Controller.Name, e.Controller.UID, e.Owner.Kind, e.Owner.Name)
	case e.Manager != "":
		fmt.Fprintf(&b, "the object exists, written by %q, and has no controller, and applying it with a controller reference to %s %s would take it over: the Applier never takes over an object it did not create; adopt it with apply.AdoptOrphans(true), rename it or remove the other one",
			e.Manager, e.Owner.Kind, e.Owner.Name)
	default:
		fmt.Fprintf(&b, "the object exists and has no controller, and applying it with a controller reference to %s %s would take it over: the Applier never takes over an object it did not create; adopt it with apply.AdoptOrphans(true), rename it or remove the other one",
			e.Owner.Kind, e.Owner.Name)
	}
	if e.conflict != nil {
		b.WriteString("; and ")
		b.WriteString(e.conflict.Error())
	}
	return b.String()
}

// Unwrap returns the [*ConflictError] that a dry run of the refused apply
// met, or nil.
func (e *TakeoverError) Unwrap() error {
	if e.conflict == nil {
		return nil
	}
	return e.conflict
}

// controllerOf returns the controller reference among refs, or nil.
func controllerOf(refs []metav1.OwnerReference) *metav1.OwnerReference {
	for i := range refs {
		if refs[i].Controller != nil && *refs[i].Controller {
			return &refs[i]
		}
	}
	return nil
}

// refusal is the [*TakeoverError] of applying an intent with controller
// reference owner onto live, or nil when the apply may go ahead: live is
// controlled by owner already (or, by our record, was after our last
// apply), or is an orphan and adopt is set.
func refusal(live client.Object, owner *metav1.OwnerReference, adopt, oursByRecord bool) *TakeoverError {
	ctl := metav1.GetControllerOfNoCopy(live)
	switch {
	case ctl != nil && ctl.UID == owner.UID:
		return nil
	case ctl != nil:
		c := *ctl
		return &TakeoverError{Owner: *owner, Controller: &c}
	case adopt || oursByRecord:
		return nil
	default:
		return &TakeoverError{Owner: *owner, writers: writers(live)}
	}
}

// writers returns the field managers that wrote obj's main resource (not
// its status), in the order of its managedFields.
func writers(obj client.Object) []string {
	var out []string
	for _, m := range obj.GetManagedFields() {
		if m.Subresource == "" && m.Manager != "" && !slices.Contains(out, m.Manager) {
			out = append(out, m.Manager)
		}
	}
	return out
}

// refuse returns the error of a refused apply. Unless the apply forces
// ownership, a dry run of it first asks the API server what else stands in
// the way (fields other managers own with other values), so that one error
// tells both; the dry run changes nothing.
func (a *Applier) refuse(ctx context.Context, in *intent, o *client.ApplyOptions, terr *TakeoverError, requests int) (Result, error) {
	if terr.Controller == nil && terr.Manager == "" {
		// The holder of an orphan is whoever wrote it, other than us.
		if i := slices.IndexFunc(terr.writers, func(m string) bool { return m != o.FieldManager }); i >= 0 {
			terr.Manager = terr.writers[i]
		}
	}
	if !forced(o) {
		if u, err := in.fresh(); err == nil {
			dry := *o
			dry.DryRun = []string{metav1.DryRunAll}
			xctx, x := withExchange(ctx)
			err := a.client.Apply(xctx, client.ApplyConfigurationFromUnstructured(u), &dry)
			requests += int(x.requests.Load())
			terr.conflict = asConflictError(err)
			if terr.conflict != nil {
				terr.conflict.inTakeover = true // the TakeoverError decides whether it is terminal
			}
		}
	}
	return Result{Requests: requests}, terr
}

// disown removes the controller reference owner from an object that an
// apply of in just took over (it existed, unknown to the Applier, when the
// apply was sent), by applying in again without it: server-side apply
// removes what its field manager no longer sets and nobody else does. The
// rest of the intent stays applied. It returns the error that reports the
// takeover, the server's answer (nil if the second apply failed) and the
// requests it sent.
func (a *Applier) disown(ctx context.Context, in *intent, o *client.ApplyOptions, owner *metav1.OwnerReference, taken *unstructured.Unstructured) (*unstructured.Unstructured, int, error) {
	terr := &TakeoverError{Owner: *owner, Appeared: true, Manager: otherManager(taken, o.FieldManager)}
	log.FromContext(ctx).Info("Object appeared while the Applier created it; removing its controller reference again",
		"object", klog.KObj(taken), "kind", taken.GetKind(), "fieldManager", terr.Manager)
	u, err := in.fresh()
	if err != nil {
		return nil, 0, fmt.Errorf("%w; removing the controller reference again failed: %w", terr, err)
	}
	refs, _, _ := unstructured.NestedSlice(u.Object, "metadata", "ownerReferences")
	kept := make([]any, 0, len(refs))
	for _, r := range refs {
		if m, ok := r.(map[string]any); ok && m["uid"] == string(owner.UID) {
			continue
		}
		kept = append(kept, r)
	}
	if err := unstructured.SetNestedSlice(u.Object, kept, "metadata", "ownerReferences"); err != nil {
		return nil, 0, fmt.Errorf("%w; removing the controller reference again failed: %w", terr, err)
	}
	xctx, x := withExchange(ctx)
	err = a.client.Apply(xctx, client.ApplyConfigurationFromUnstructured(u), o)
	if err != nil {
		return nil, int(x.requests.Load()), fmt.Errorf("%w; removing the controller reference again failed: %w", terr, err)
	}
	return u, int(x.requests.Load()), terr
}

// otherManager returns a field manager other than ours that wrote obj's
// main resource (not its status), or "someone else".
func otherManager(obj client.Object, ours string) string {
	for _, m := range obj.GetManagedFields() {
		if m.Manager != ours && m.Subresource == "" {
			return m.Manager
		}
	}
	return "someone else"
}

// controllerUID returns the UID of obj's controller, or "".
func controllerUID(obj client.Object) string {
	if ctl := controllerOf(obj.GetOwnerReferences()); ctl != nil {
		return string(ctl.UID)
	}
	return ""
}

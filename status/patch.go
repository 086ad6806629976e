package status

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// Patcher writes one object's status only when it changed. Take it right
// after reading the object, before changing its status; [Patcher.Patch]
// then compares and sends one server-side apply of the whole status, or
// nothing:
//
//	p := status.NewPatcher(app)
//	app.Status.URL = url
//	status.MarkReady(app, "Deployed", "3/3 replicas ready")
//	sent, err := p.Patch(ctx, c, app, client.FieldOwner("webapp-controller"))
//
// It needs no GET: the object as read is the "before". A Patcher holds a
// copy of the status only, not of the whole object. It is not safe for
// concurrent use; one reconcile uses one Patcher.
type Patcher struct {
	uid             types.UID
	resourceVersion string // of the object as read, then of the last write
	wrote           bool   // resourceVersion is this Patcher's own write, not a read
	// The status as read, then as last written: a typed deep copy when the
	// status type has a DeepCopy method (converted only when a comparison
	// needs it), else unstructured data.
	typed     reflect.Value
	before    any
	converted bool  // before holds the snapshot
	err       error // converting the object failed
}

// NewPatcher snapshots obj's status (and its UID and resourceVersion).
// obj may be an [Accessor] of the object.
func NewPatcher(obj client.Object) *Patcher {
	obj = unwrap(obj)
	p := &Patcher{uid: obj.GetUID(), resourceVersion: obj.GetResourceVersion()}
	if f, st, ok := typedField(obj); ok && st.copy != nil {
		p.typed = st.copy(f)
		return p
	}
	p.before, p.err = statusOf(obj)
	p.converted = true
	return p
}

// Unchanged reports, cheaply, that [Patcher.Patch] would send nothing for
// obj: its status equals the snapshot as typed Go values (the status type
// has a DeepCopy method, as controller-gen writes one), and no status
// write of this process is pending for the object. A caller can then skip
// Patch and what it would prepare for it (a context with a deadline, say).
// It converts nothing and sends nothing. False does not mean that Patch
// will send: Patch compares further, as JSON. It is always false for an
// object whose status has no typed DeepCopy (an unstructured object); obj
// may be an [Accessor]. After this Patcher's own Patch it is true until
// the status changes again, and for a Patcher of a read at the
// resourceVersion our last write returned, it is true when the status is
// that write's.
func (p *Patcher) Unchanged(obj client.Object) bool {
	obj = unwrap(obj)
	return (p.uid == "" || obj.GetUID() == p.uid) && p.unchangedTyped(obj)
}

// unchangedTyped reports, without converting anything, that obj's status
// is the typed snapshot and nothing this process wrote is pending for it:
// then no write is needed. Typed equality (apimachinery's semantic
// equality) implies equality as JSON; the converse does not hold (times
// differ below the second the API keeps), so false only means "compare
// as JSON".
func (p *Patcher) unchangedTyped(obj client.Object) bool {
	if p.converted || !p.typed.IsValid() {
		return false
	}
	f, _, ok := typedField(obj)
	if !ok || f.Type() != p.typed.Type() {
		return false
	}
	a, b := p.typed, f
	if a.Kind() == reflect.Struct { // compare in place, not copies
		a, b = a.Addr(), b.Addr()
	}
	// Equal values first (the usual case, and several times cheaper), then
	// apimachinery's semantic equality (quantities, times in another
	// location).
	if ai, bi := a.Interface(), b.Interface(); !reflect.DeepEqual(ai, bi) && !equality.Semantic.DeepEqual(ai, bi) {
		return false
	}
	_, pending := p.unseenWrite()
	return !pending
}

// unseenWrite returns this process' last status write of the object,
// unless the snapshot is known to include it. A snapshot read at that
// write's resourceVersion includes it, and the log forgets it (the cache
// has caught up); after this Patcher's own write the snapshot is that
// write, and the log keeps it for the reads that still lag behind it.
func (p *Patcher) unseenWrite() (lastWrite, bool) {
	if p.uid == "" {
		return lastWrite{}, false
	}
	last, ok := writes.get(p.uid)
	if ok && last.resourceVersion == p.resourceVersion {
		if !p.wrote {
			writes.forget(p.uid)
		}
		return lastWrite{}, false
	}
	return last, ok
}

// snapshot returns the snapshot as unstructured data, converting the
// typed copy the first time.
func (p *Patcher) snapshot() (any, error) {
	if !p.converted {
		p.before, p.err = unstructuredStatus(p.typed)
		p.converted = true
	}
	return p.before, p.err
}

// Patch writes obj's status to its status subresource if it differs from
// the snapshot, and reports whether it sent a request. obj may be an
// [Accessor] of the object.
//
// The request is one server-side apply whose body is obj's apiVersion,
// kind, name, namespace and whole status: scalars and conditions travel
// together, so no write drops a field another write set, and a field or
// condition removed from status since the last Patch is removed from the
// object (it was owned by the field owner and is no longer applied).
//
// The options are controller-runtime's, those of c.Status().Apply. The
// field owner is the default of c when c was made with
// client.WithFieldOwner (as reconciler.Env's Client is), or
// client.FieldOwner; the API server refuses an apply without one (an error
// of Kind Invalid). Ownership of status fields is forced by default (the
// object as read already holds every other writer's values, so forcing
// only takes over fields the controller puts in its own status);
// apply.Force(false) (github.com/kopgo/kopgo/apply) makes a field another
// manager owns with a different value a failure of Kind Invalid that names
// the manager and the field. client.DryRunAll makes the server validate and
// compute the write without persisting it; a dry run is not remembered:
// the next Patch compares against the same snapshot.
//
// Unchanged means equal once converted to JSON-shaped data, so times are
// compared at the second precision the API keeps. When this process wrote
// the object's status since the snapshot's resourceVersion (the cache had
// not yet caught up with that write when the object was read) and the
// status differs from what was written, Patch sends even when obj equals
// the snapshot; when the snapshot is known to predate this process' last
// write (the version it was based on, or an earlier write of ours) and the
// status equals that write, Patch sends nothing, though it differs from
// the snapshot: see "Stale caches" in the package documentation.
//
// When the status carries Ready, Reconciling or Stalled, those the apply
// leaves out are gone once Patch returns, even where another field
// manager wrote them (a `kubectl edit`, an operator's Status().Update):
// an entry the apply's response still holds is removed with a guarded
// JSON patch, a second request only then (see "Conditions kopgo owns" in
// the package documentation). Conditions of other types are left alone.
//
// On success obj's resourceVersion is the one the server returned and the
// Patcher's snapshot becomes the status sent, so a second Patch in the
// same reconcile sends only what changed after the first. Errors name the
// object; their kind is that of the API error (koperrors.KindOf), except a
// field-manager conflict under Force(false), which is Invalid.
func (p *Patcher) Patch(ctx context.Context, c client.Client, obj client.Object, opts ...client.SubResourceApplyOption) (bool, error) {
	obj = unwrap(obj)
	if p.uid != "" && obj.GetUID() != p.uid {
		return false, koperrors.Errorf(koperrors.Invalid, "patch status of %s: the Patcher was made for the object with UID %s, not %s", kopmeta.RefOf(obj), p.uid, obj.GetUID())
	}
	if p.unchangedTyped(obj) {
		return false, nil
	}
	o := kopmeta.RefOf(obj)
	before, err := p.snapshot()
	if err != nil {
		return false, koperrors.WrapKind(koperrors.Serialization, err, "read status of", o)
	}
	after, err := statusOf(obj)
	if err != nil {
		return false, koperrors.WrapKind(koperrors.Serialization, err, "read status of", o)
	}
	if !p.mustSend(before, after) {
		return false, nil
	}
	force := true
	opt := (&client.SubResourceApplyOptions{ApplyOptions: client.ApplyOptions{Force: &force}}).ApplyOpts(opts)
	dryRun := len(opt.DryRun) > 0
	gvk, err := gvkOf(obj, c.Scheme())
	if err != nil {
		return false, koperrors.WrapKind(koperrors.Invalid, err, "patch status of", o)
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if after != nil {
		u.Object["status"] = after
	}
	// else: no status at all, so that the field owner owns no status field.
	// Sending "status: {}" instead makes the server store status: null,
	// which a CRD's schema rejects (kubernetes/kubernetes#117447).
	u.SetGroupVersionKind(gvk)
	u.SetName(obj.GetName())
	u.SetNamespace(obj.GetNamespace())
	// Conditions kopgo owns are taken over (force) or removed when another
	// field manager holds them: see "Conditions kopgo owns" in the package
	// documentation.
	takeOver := !dryRun && (opt.Force == nil || *opt.Force) && maintainsOwned(after)
	var patchOpts []client.SubResourcePatchOption
	if opt.FieldManager != "" {
		patchOpts = append(patchOpts, client.FieldOwner(opt.FieldManager))
	}
	err = c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opt)
	if drop := unwanted(before, after); err != nil && takeOver && apierrors.IsInvalid(err) && len(drop) > 0 {
		// Leaving out a condition whose fields another manager partly
		// owns leaves a partial entry the schema refuses: remove the
		// entries first, then apply again.
		if _, rerr := removeConditions(ctx, c, gvk, obj, conditionTypes(before), drop, patchOpts...); rerr != nil {
			return false, rerr
		}
		err = c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opt)
	}
	if err != nil {
		if apierrors.IsConflict(err) && apierrors.HasStatusCause(err, metav1.CauseTypeFieldManagerConflict) {
			return false, koperrors.WrapKind(koperrors.Invalid, err, "patch status of", o)
		}
		return false, koperrors.Wrap(err, "patch status of", o)
	}
	if dryRun {
		return true, nil
	}
	rv := u.GetResourceVersion()
	basedOn := p.resourceVersion
	if takeOver {
		// The response is the object as stored, with every manager's
		// entries: no read needed to see what the apply left.
		if stored := u.Object["status"]; len(unwanted(stored, after)) > 0 {
			drop := unwanted(stored, after)
			// Still there after the apply: another manager owns them.
			if uid := u.GetUID(); uid != "" {
				writes.put(lastWrite{uid: uid, resourceVersion: rv, older: olderThan(uid, basedOn), status: after})
				basedOn = rv
			}
			removed, err := removeConditions(ctx, c, gvk, obj, conditionTypes(stored), drop, patchOpts...)
			if err != nil {
				return false, err
			}
			if removed != nil {
				rv = removed.GetResourceVersion()
			}
		}
	}
	obj.SetResourceVersion(rv)
	p.before, p.converted, p.resourceVersion, p.wrote = after, true, rv, true
	if f, st, ok := typedField(obj); ok && st.copy != nil && p.typed.IsValid() {
		// The snapshot is what was sent, typed again, so that Unchanged
		// and the next Patch take the shortcut.
		p.typed, p.before, p.converted = st.copy(f), nil, false
	}
	if uid := u.GetUID(); uid != "" {
		writes.put(lastWrite{uid: uid, resourceVersion: rv, older: olderThan(uid, basedOn), status: after})
	}
	return true, nil
}

// olderThan returns the resourceVersions known to predate a write of uid
// based on the version basedOn: that one, and this process' earlier writes
// of uid, which finished before this one began, with theirs.
func olderThan(uid types.UID, basedOn string) []string {
	older := []string{basedOn}
	if prev, ok := writes.get(uid); ok {
		for _, rv := range append([]string{prev.resourceVersion}, prev.older...) {
			if len(older) < maxOlder && !slices.Contains(older, rv) {
				older = append(older, rv)
			}
		}
	}
	return older
}

// mustSend decides whether status after must be written. The snapshot is
// the server's status as of the read; the write log knows whether this
// process wrote a status the read did not include yet, or that the read
// predates our last write.
func (p *Patcher) mustSend(before, after any) bool {
	changed := !equality.Semantic.DeepEqual(before, after)
	last, ok := p.unseenWrite()
	switch {
	case !ok:
		return changed
	case slices.Contains(last.older, p.resourceVersion):
		// The read predates our last write (it is the version that write
		// started from, or one of our earlier writes: a cache that has not
		// caught up): the server holds what we wrote, whatever the read
		// says.
		return !equality.Semantic.DeepEqual(last.status, after)
	default:
		// The read may predate our last write: an unchanged status is
		// skipped only if that write holds the same.
		return changed || !equality.Semantic.DeepEqual(last.status, after)
	}
}

// gvkOf is obj's kind from the scheme, or from its TypeMeta when the scheme
// does not know its Go type.
func gvkOf(obj client.Object, scheme *runtime.Scheme) (schema.GroupVersionKind, error) {
	set := obj.GetObjectKind().GroupVersionKind()
	if scheme == nil {
		if set.Kind == "" || set.Version == "" {
			return schema.GroupVersionKind{}, fmt.Errorf("no scheme, and %T has no apiVersion and kind", obj)
		}
		return set, nil
	}
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil && set.Kind != "" && set.Version != "" {
		return set, nil
	}
	return gvk, err
}

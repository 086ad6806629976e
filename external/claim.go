package external

import (
	"context"
	"errors"
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/reconciler"
)

// foreign is the verdict on obj, whose annotation records resource id,
// made for another object (its key other): refused, never adopted,
// updated or deleted through obj.
func foreign(ctx context.Context, env *reconciler.Env, obj client.Object, id, other string) error {
	return koperrors.Terminal(koperrors.WithReason(fmt.Errorf(
		"external resource %q recorded on %s (annotation %s) was created for %s (key %q), not for this object (key %q): it is not adopted, updated or deleted through %s; remove annotation %s from %s to give it a resource of its own",
		id, kopmeta.RefOf(obj), NameAnnotation, ownerOf(ctx, env, obj, other), other, key(obj), kopmeta.RefOf(obj), NameAnnotation, kopmeta.RefOf(obj)),
		reasonForeign))
}

// ownerOf names the object of obj's type whose key (UID) is uid, as the
// cache holds it, or says that it is not seen.
func ownerOf(ctx context.Context, env *reconciler.Env, obj client.Object, uid string) string {
	unseen := fmt.Sprintf("an object with UID %s that this controller does not see", uid)
	if env == nil || env.Reader == nil || env.Scheme == nil {
		return unseen
	}
	gvk, err := apiutil.GVKForObject(obj, env.Scheme)
	if err != nil {
		return unseen
	}
	gvk.Kind += "List"
	o, err := env.Scheme.New(gvk)
	list, ok := o.(client.ObjectList)
	if err != nil || !ok || env.Reader.List(ctx, list) != nil {
		return unseen
	}
	name := ""
	_ = apimeta.EachListItem(list, func(item runtime.Object) error {
		if m, ok := item.(client.Object); ok && string(m.GetUID()) == uid {
			name = kopmeta.RefOf(m).String()
		}
		return nil
	})
	if name == "" {
		return unseen
	}
	return name
}

// recheck verifies, when obj's recorded ID changed from prev to id (the
// annotation edited), that no other resource was made for obj: one that
// Find finds is the object's own, and recording another ID would orphan
// it. Without a Finder there is nothing to ask.
func (r *Reconciler[T]) recheck(ctx context.Context, c Client[T], obj T, id, prev string) error {
	f, ok := c.(Finder[T])
	if !ok {
		return nil
	}
	found, err := r.find(ctx, f, obj)
	if err != nil || found == "" || found == id {
		return err
	}
	return koperrors.Terminal(koperrors.WithReason(fmt.Errorf(
		"annotation %s of %s was changed from %q to %q, but external resource %q was created for this object (key %q) and would be orphaned: set the annotation back to %q, or delete %q at the provider first",
		NameAnnotation, kopmeta.RefOf(obj), prev, id, found, key(obj), found, found), reasonNameConflict))
}

// heldFor returns the error of obj's reconcile inside a Retry-After the
// system gave it (deletion included), or nil.
func (r *Reconciler[T]) heldFor(obj T, now time.Time) error {
	until := r.memos.get(obj.GetUID()).holdUntil
	if !now.Before(until) {
		return nil
	}
	return koperrors.WrapKind(koperrors.Unavailable, &heldError{until: until, msg: fmt.Sprintf(
		"the external system asked to wait until %s (Retry-After): no call before then", until.UTC().Format(time.RFC3339))},
		"external resource of", kopmeta.RefOf(obj))
}

// holding returns the action of a reconcile that failed with err: for a
// call not made inside a Retry-After, a requeue when it ends.
func (r *Reconciler[T]) holding(act reconciler.Action, err error) (reconciler.Action, error) {
	if h, ok := errors.AsType[*heldError](err); ok {
		return reconciler.RequeueAfter(h.until.Sub(r.now())), err
	}
	return act, err
}

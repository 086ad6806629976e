package external

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
)

// Cleanup deletes obj's external resource and reports done once the
// system no longer has it (see the package documentation, "Deletion"):
// it observes first, sends one DELETE, and waits while the system
// deletes. With the [Orphan] policy it calls nothing.
func (r *Reconciler[T]) Cleanup(ctx context.Context, obj T, env *reconciler.Env) (reconciler.Action, error) {
	act, err := r.cleanup(ctx, obj, env)
	return r.holding(act, err)
}

func (r *Reconciler[T]) cleanup(ctx context.Context, obj T, env *reconciler.Env) (reconciler.Action, error) {
	if r.optErr != nil {
		return reconciler.Done(), r.optErr
	}
	uid := obj.GetUID()
	ann := obj.GetAnnotations()
	id, pending := ann[NameAnnotation], ann[PendingAnnotation]
	if r.deletion == Orphan {
		if id != "" {
			env.Recorder.Normal(obj, nil, reasonOrphaned, "Delete", fmt.Sprintf("Left external resource %s in place (deletion policy Orphan)", id))
		}
		r.memos.forget(uid)
		return reconciler.Done(), nil
	}
	now := r.now()
	if err := r.heldFor(obj, now); err != nil {
		return reconciler.Done(), err
	}
	recorded := id != "" || pending != "" || r.memos.get(uid).created != ""
	c, err := r.client(ctx, obj, env)
	if err != nil {
		if !recorded {
			// Nothing recorded and no system to ask: nothing anyone
			// knows of to delete.
			r.memos.forget(uid)
			return reconciler.Done(), nil
		}
		return reconciler.Done(), err
	}
	_, canFind := c.(Finder[T])
	asked := false
	if id == "" {
		if !recorded && !canFind {
			r.memos.forget(uid)
			return reconciler.Done(), nil
		}
		asked = r.memos.get(uid).created == "" && canFind
		if id, err = r.resolve(ctx, c, obj, pending, true); err != nil {
			return reconciler.Done(), err
		}
		if id == "" {
			r.memos.forget(uid)
			return reconciler.Done(), nil
		}
	}
	return r.remove(ctx, env, c, obj, id, asked, now)
}

// remove deletes resource id: an observation first (a resource of
// another object is left in place; one the system is deleting gets no
// second DELETE), then one DELETE, then waiting until it is gone. Once it
// is, a Finder is asked (unless asked is set) whether another resource was
// made for obj (its ID lost or edited), which is deleted too.
func (r *Reconciler[T]) remove(ctx context.Context, env *reconciler.Env, c Client[T], obj T, id string, asked bool, now time.Time) (reconciler.Action, error) {
	uid := obj.GetUID()
	for {
		obs, err := r.observe(ctx, env, c, obj, id)
		gone := true
		switch {
		case koperrors.ReasonOf(err) == reasonForeign:
			gone = false
			env.Recorder.Warning(obj, nil, reasonNotDeleted, "Delete", err.Error())
		case err != nil:
			return reconciler.Done(), err
		case obs.Deleting:
			return r.deleting(obj, id, "the system is deleting it")
		case obs.Exists:
			if m := r.memos.get(uid); m.deleted == id && now.Sub(m.deletedAt) < r.period {
				return r.deleting(obj, id, "its DELETE was accepted")
			}
			err := r.do(ctx, c, obj, "delete", func(ctx context.Context) error { return c.Delete(ctx, obj, id) })
			if koperrors.KindOf(err) != koperrors.NotFound {
				if err != nil {
					return reconciler.Done(), err
				}
				r.memos.update(uid, func(m *memo) { m.deleted, m.deletedAt = id, now })
				if obs, err = r.observe(ctx, env, c, obj, id); err != nil {
					return reconciler.Done(), err
				}
				if obs.Exists {
					return r.deleting(obj, id, "its DELETE was accepted")
				}
			}
		}
		if gone {
			env.Recorder.Normal(obj, nil, reasonDeleted, "Delete", fmt.Sprintf("Deleted external resource %s", id))
		}
		if f, ok := c.(Finder[T]); ok && !asked {
			asked = true
			found, err := r.find(ctx, f, obj)
			if err != nil {
				return reconciler.Done(), err
			}
			if found != "" && found != id {
				id = found
				continue
			}
		}
		r.memos.forget(uid)
		return reconciler.Done(), nil
	}
}

// deleting reports obj Reconciling, reason Deleting, and looks again
// after deletionPoll.
func (r *Reconciler[T]) deleting(obj T, id, why string) (reconciler.Action, error) {
	if s, ok := any(obj).(status.Setter); ok {
		status.MarkReconciling(s, reasonDeleting, fmt.Sprintf("waiting for external resource %s to be deleted: %s", id, why))
	}
	return reconciler.RequeueAfter(deletionPoll(obj, r.period, time.Now())), nil
}

// deletionPoll is how soon an object whose resource is being deleted is
// looked at again: a tenth of the time since the object's deletion began,
// at least a second and at most [soon]'s look again. A deletion of
// seconds is seen done within a second of the system's 404; one of ten
// minutes costs a call a minute, not one a second.
func deletionPoll(obj client.Object, period time.Duration, now time.Time) time.Duration {
	d := time.Second
	if ts := obj.GetDeletionTimestamp(); ts != nil {
		d = max(now.Sub(ts.Time)/10, time.Second)
	}
	return min(d, soon(period))
}

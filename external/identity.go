package external

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/reconciler"
)

const (
	// NameAnnotation holds the ID of an object's external resource, as
	// Create returned it. The Reconciler writes it; a person sets it to
	// adopt an existing resource (see the package documentation).
	NameAnnotation = "kopgo.dev/external-name"
	// PendingAnnotation is set, to the time it started, while a create
	// is under way, before the system is asked, and removed when its ID
	// is recorded: found on an object without [NameAnnotation], it says
	// that a create may have happened whose ID was never recorded.
	PendingAnnotation = "kopgo.dev/external-create-pending"
)

// recordAttempts bounds the optimistic-lock retries of the ID's
// recording; each retry reads the object from the API server first.
const recordAttempts = 5

// annotate sets the annotations in set on obj (a nil value removes one)
// with a JSON merge patch that carries obj's resourceVersion, so that it
// fails with a Conflict if obj is not the object's latest version. The
// patch is sent for a copy of obj: only its annotations and version are
// copied back, so that the status the reconcile is building is kept.
func annotate(ctx context.Context, c client.Client, obj client.Object, set map[string]*string) error {
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.GetResourceVersion(),
		"annotations":     set,
	}})
	if err != nil {
		return err
	}
	cp, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("%T: DeepCopyObject does not return a client.Object", obj)
	}
	if err := c.Patch(ctx, cp, client.RawPatch(types.MergePatchType, body)); err != nil {
		return err
	}
	obj.SetAnnotations(cp.GetAnnotations())
	obj.SetResourceVersion(cp.GetResourceVersion())
	return nil
}

// markPending records, before a create, that it is under way, and drops
// the ID of a resource that is gone. It fails on any change to obj since
// it was read: then nothing has been asked of the system yet.
func markPending[T client.Object](ctx context.Context, env *reconciler.Env, obj T, now time.Time) error {
	stamp := now.UTC().Format(time.RFC3339)
	err := annotate(ctx, env.Client, obj, map[string]*string{PendingAnnotation: &stamp, NameAnnotation: nil})
	return koperrors.Wrap(err, "mark external create pending on", kopmeta.RefOf(obj))
}

// clearPending removes the pending mark of a create that certainly did
// not happen.
func clearPending[T client.Object](ctx context.Context, env *reconciler.Env, obj T) error {
	err := annotate(ctx, env.Client, obj, map[string]*string{PendingAnnotation: nil})
	return koperrors.Wrap(err, "clear external create pending on", kopmeta.RefOf(obj))
}

// record writes id as obj's [NameAnnotation] and removes the pending
// mark. A conflict (someone changed the object since it was read: a spec
// edit, a label) does not lose the ID: the latest object is read from
// the API server and the patch sent again on it, up to recordAttempts
// times.
func record[T client.Object](ctx context.Context, env *reconciler.Env, obj T, id string) error {
	set := map[string]*string{NameAnnotation: &id, PendingAnnotation: nil}
	var err error
	for range recordAttempts {
		if err = annotate(ctx, env.Client, obj, set); koperrors.KindOf(err) != koperrors.Conflict {
			break
		}
		latest, ok := obj.DeepCopyObject().(client.Object)
		if !ok {
			break
		}
		if gerr := env.Reader.Get(ctx, client.ObjectKeyFromObject(obj), latest); gerr != nil {
			err = gerr
			break
		}
		if other := latest.GetAnnotations()[NameAnnotation]; other != "" && other != id {
			// Someone recorded another resource meanwhile (a person
			// adopting one): theirs stands, ours is named in the error.
			return koperrors.Terminal(koperrors.WithReason(fmt.Errorf(
				"record external ID %q on %s: annotation %s was set to %q meanwhile; resource %q was created for this object and is not recorded anywhere else: delete it at the provider if it is not wanted",
				id, kopmeta.RefOf(obj), NameAnnotation, other, id), "ExternalNameConflict"))
		}
		obj.SetResourceVersion(latest.GetResourceVersion())
		obj.SetAnnotations(latest.GetAnnotations())
	}
	return koperrors.Wrap(err, "record external ID on", kopmeta.RefOf(obj))
}

// key is the identity of obj's resource across crashes, passed to Create
// and Find.
func key(obj client.Object) string { return string(obj.GetUID()) }

// unknownOutcome is the verdict on an object whose create may have
// happened, with no ID recorded and no Finder to ask.
func unknownOutcome(obj client.Object, since string, deleting bool) error {
	what := "to create it again"
	if deleting {
		what = "to let the deletion finish (after deleting the resource there, if it exists)"
	}
	return koperrors.Terminal(koperrors.WithReason(fmt.Errorf(
		"the create of %s's external resource started at %s has an unknown outcome (its ID was never recorded) and the client has no Find: look at the provider for a resource tagged %q; set annotation %s to its ID to adopt it, or remove annotation %s %s",
		kopmeta.RefOf(obj), since, key(obj), NameAnnotation, PendingAnnotation, what), "CreateOutcomeUnknown"))
}

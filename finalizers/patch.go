package finalizers

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/sleep"
	"github.com/kopgo/kopgo/internal/telemetry"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// maxLost bounds the lost races of one call: patches refused because
// other writers changed the finalizers between our read and our patch.
const maxLost = 50

// patchOp is one JSON patch (RFC 6902) operation.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

const finalizersPath = "/metadata/finalizers"

// addOps sets the finalizers to fins plus name, provided they still are
// exactly fins on the server: the list written is then a superset of the
// list replaced, so nobody's entry is lost, and name is never listed twice.
func addOps(fins []string, name string) []patchOp {
	var tested any = fins
	if len(fins) == 0 {
		// The API server leaves an empty list out of the JSON it patches,
		// and a JSON patch test of null matches a missing member.
		tested = nil
	}
	return []patchOp{
		{Op: "test", Path: finalizersPath, Value: jsonValue{tested}},
		{Op: "add", Path: finalizersPath, Value: append(slices.Clone(fins), name)},
	}
}

// removeOps removes each entry of fins that is one of names, from the last
// to the first so that earlier indexes stay valid, each after a test that
// the entry at that index still is that name. Nothing else in the list is
// touched; entries others added or removed elsewhere in the list in the
// meantime do not make it fail, only a shift of ours does.
func removeOps(fins, names []string) []patchOp {
	var ops []patchOp
	for i, f := range slices.Backward(fins) {
		if slices.Contains(names, f) {
			path := finalizersPath + "/" + strconv.Itoa(i)
			ops = append(ops, patchOp{Op: "test", Path: path, Value: f}, patchOp{Op: "remove", Path: path})
		}
	}
	return ops
}

// jsonValue marshals nil as JSON null, which omitempty would drop.
type jsonValue struct{ v any }

func (j jsonValue) MarshalJSON() ([]byte, error) { return json.Marshal(j.v) }

// plan returns the operations that take the finalizers fins to the wanted
// state, or none when they are there already. stale tells that fins came
// from a re-read after a lost race, not from the caller.
type plan func(fins []string, stale bool) ([]patchOp, error)

// update patches obj until plan has nothing left to do. Each patch first
// tests obj's UID when obj has one, so that an object deleted and created
// again under the same name is never changed in the old one's stead. A
// patch refused with 422 (a failed test) is followed by a fresh read and a
// new plan; any other error ends the call.
func update(ctx context.Context, c Client, obj client.Object, opts []client.PatchOption, next plan) (changed bool, err error) {
	ctx, span := telemetry.StartSpan(ctx, "finalizers")
	defer func() {
		span.SetAttributes(attribute.Bool("kopgo.finalizers.changed", changed))
		telemetry.EndSpan(span, "", err)
	}()
	uid := obj.GetUID()
	stale := false
	for lost := 0; ; {
		ops, err := next(obj.GetFinalizers(), stale)
		if err != nil || len(ops) == 0 {
			return changed, err
		}
		if lost == maxLost {
			return changed, koperrors.Errorf(koperrors.Conflict, "the finalizers kept changing: %d patches lost the race", maxLost)
		}
		patch, err := jsonPatch(append(preconditions(uid), ops...))
		if err != nil {
			return changed, err
		}
		err = c.Patch(ctx, obj, patch, opts...)
		switch {
		case err == nil:
			// obj holds the response: the next plan is normally empty.
			changed, stale = true, false
		case apierrors.IsInvalid(err):
			// A test failed: someone else changed the finalizers, or the
			// object was replaced. Or the patch was refused for a reason
			// of its own, which reread tells apart.
			if err := reread(ctx, c, obj, uid, lost, err); err != nil {
				return changed, err
			}
			lost++
			stale = true
		default:
			return changed, err
		}
	}
}

// preconditions are the tests every patch starts with: the UID of the
// object in hand, when it has one.
func preconditions(uid types.UID) []patchOp {
	if uid == "" {
		return nil
	}
	return []patchOp{{Op: "test", Path: "/metadata/uid", Value: string(uid)}}
}

func jsonPatch(ops []patchOp) (client.Patch, error) {
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, koperrors.WrapKind(koperrors.Serialization, err, "encode finalizer patch", kopmeta.ObjectRef{})
	}
	return client.RawPatch(types.JSONPatchType, data), nil
}

// reread brings obj up to date after a refused patch with a patch of
// preconditions only: it changes nothing (the API server writes nothing and
// the resourceVersion stays), and its response is the object as stored,
// never a cache's older copy. A refused probe means the object was
// replaced; an unchanged resourceVersion means the first patch was refused
// for another reason than a lost race: reread then returns refused.
//
// Before the probe it waits a little when patches have already lost
// (jittered, so that writers racing for the same list spread out).
func reread(ctx context.Context, c Client, obj client.Object, uid types.UID, lost int, refused error) error {
	if err := sleep.For(ctx, backoff(lost)); err != nil {
		return err
	}
	had := obj.GetResourceVersion()
	probe := preconditions(uid)
	if len(probe) == 0 {
		probe = []patchOp{{Op: "test", Path: "/metadata/name", Value: obj.GetName()}}
	}
	patch, err := jsonPatch(probe)
	if err != nil {
		return err
	}
	err = c.Patch(ctx, obj, patch)
	switch {
	case apierrors.IsInvalid(err):
		return koperrors.Errorf(koperrors.NotFound, "the object (uid %s) was deleted, and another created under its name", uid)
	case err != nil:
		return err
	case had != "" && obj.GetResourceVersion() == had:
		return refused
	}
	return nil
}

// backoff is the wait before a re-read: none after the first lost race,
// then 5ms per lost race up to 20ms, jittered (half to one and a half
// times), so that writers racing for the same list fall out of step.
func backoff(lost int) time.Duration {
	if lost == 0 {
		return 0
	}
	d := time.Duration(min(lost, 4)) * 5 * time.Millisecond
	return d/2 + rand.N(d)
}

package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// loggingClient is the Env's client as the reconciler gets it: it logs
// the reconciler's writes to objects of type T (see ownwrites.go), so
// that no later reconcile of such an object runs on a cached state older
// than them, and folds a reconcile's writes to its own object into what
// it acted on (see wake.go), so that their echoes do not wake it again.
// Reads and every other write pass through unchanged.
type loggingClient[T client.Object] struct {
	client.Client
	objs *objects
}

// Update implements client.Writer, logging a write to a T.
func (c *loggingClient[T]) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.logged(ctx, obj, obj.GetResourceVersion(), func() error { return c.Client.Update(ctx, obj, opts...) })
}

// Patch implements client.Writer, logging a write to a T.
func (c *loggingClient[T]) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.logged(ctx, obj, preconditionOf(patch, obj), func() error { return c.Client.Patch(ctx, obj, patch, opts...) })
}

// Create implements client.Writer, counting the write.
func (c *loggingClient[T]) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	noteEffect(ctx)
	return c.Client.Create(ctx, obj, opts...)
}

// Delete implements client.Writer, counting the write.
func (c *loggingClient[T]) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	noteEffect(ctx)
	return c.Client.Delete(ctx, obj, opts...)
}

// DeleteAllOf implements client.Writer, counting the write.
func (c *loggingClient[T]) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	noteEffect(ctx)
	return c.Client.DeleteAllOf(ctx, obj, opts...)
}

// Apply implements client.Writer, counting the write.
func (c *loggingClient[T]) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	noteEffect(ctx)
	return c.Client.Apply(ctx, obj, opts...)
}

// Status implements client.StatusClient, logging writes to a T's status.
func (c *loggingClient[T]) Status() client.SubResourceWriter {
	return &loggingStatus[T]{SubResourceWriter: c.Client.Status(), c: c}
}

// logged runs the write do to obj, logged when obj is a T. precondition
// is the resourceVersion the write is made on, when the request carries
// it as a precondition (an Update, a patch with optimistic locking); ""
// when it does not.
func (c *loggingClient[T]) logged(ctx context.Context, obj client.Object, precondition string, do func() error) error {
	noteEffect(ctx)
	if _, ok := obj.(T); !ok {
		return do()
	}
	key := client.ObjectKeyFromObject(obj)
	own := reconcilingOf(ctx) == key
	var sent fingerprint
	if own {
		sent = c.objs.fingerprint(obj)
	}
	if err := do(); err != nil {
		return err
	}
	c.objs.wrote(key, obj.GetUID(), obj.GetResourceVersion())
	if own {
		c.objs.wroteMeta(key, sent, precondition, obj)
	}
	return nil
}

// preconditionOf is the resourceVersion patch carries as a precondition:
// metadata.resourceVersion of a merge patch (client.MergeFromWithOptimisticLock,
// or one written by hand), or the value a JSON patch tests
// /metadata/resourceVersion against; "" for none (a server-side apply).
func preconditionOf(patch client.Patch, obj client.Object) string {
	switch patch.Type() {
	case types.MergePatchType, types.StrategicMergePatchType, types.JSONPatchType:
	default:
		return ""
	}
	data, err := patch.Data(obj)
	if err != nil || !bytes.Contains(data, []byte("resourceVersion")) {
		return ""
	}
	if patch.Type() == types.JSONPatchType {
		var ops []struct {
			Op    string `json:"op"`
			Path  string `json:"path"`
			Value any    `json:"value"`
		}
		if json.Unmarshal(data, &ops) != nil {
			return ""
		}
		for _, op := range ops {
			if v, ok := op.Value.(string); ok && op.Op == "test" && op.Path == "/metadata/resourceVersion" {
				return v
			}
		}
		return ""
	}
	var m struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if json.Unmarshal(data, &m) != nil {
		return ""
	}
	return m.Metadata.ResourceVersion
}

type reconcilingKey struct{}

// reconciling is one reconcile as its context carries it: the object it is
// for, and how many writes (through Env.Client or the Applier) and calls
// to external systems it made, so that the loop knows whether it may have
// made something a cleanup must undo.
type reconciling struct {
	key     types.NamespacedName
	effects atomic.Int64
}

// withReconciling returns ctx for the reconcile of the object at key: the
// writes to it made under ctx are the reconcile's own, and every write or
// external call under ctx is counted in the returned reconciling.
func withReconciling(ctx context.Context, key types.NamespacedName) (context.Context, *reconciling) {
	r := &reconciling{key: key}
	return context.WithValue(ctx, reconcilingKey{}, r), r
}

// reconcilingOf is the object whose reconcile ctx belongs to; the zero
// name outside a reconcile.
func reconcilingOf(ctx context.Context) types.NamespacedName {
	if r, ok := ctx.Value(reconcilingKey{}).(*reconciling); ok {
		return r.key
	}
	return types.NamespacedName{}
}

// noteEffect counts a write or an external call of ctx's reconcile.
func noteEffect(ctx context.Context) {
	if r, ok := ctx.Value(reconcilingKey{}).(*reconciling); ok {
		r.effects.Add(1)
	}
}

// loggingStatus is loggingClient's status writer.
type loggingStatus[T client.Object] struct {
	client.SubResourceWriter
	c *loggingClient[T]
}

// Update implements client.SubResourceWriter, logging a write to a T.
func (s *loggingStatus[T]) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.c.logged(ctx, obj, obj.GetResourceVersion(), func() error { return s.SubResourceWriter.Update(ctx, obj, opts...) })
}

// Patch implements client.SubResourceWriter, logging a write to a T.
func (s *loggingStatus[T]) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.c.logged(ctx, obj, preconditionOf(patch, obj), func() error { return s.SubResourceWriter.Patch(ctx, obj, patch, opts...) })
}

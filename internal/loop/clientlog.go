package loop

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// loggingClient is the Env's client as the reconciler gets it: it logs
// the reconciler's writes to objects of type T in the loop's write log
// (see ownwrites.go), so that no later reconcile of such an object runs on
// a cached state older than them. Reads and every other write pass
// through unchanged.
type loggingClient[T client.Object] struct {
	client.Client
	writes *ownWrites
}

// Update implements client.Writer, logging a write to a T.
func (c *loggingClient[T]) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.logged(obj, func() error { return c.Client.Update(ctx, obj, opts...) })
}

// Patch implements client.Writer, logging a write to a T.
func (c *loggingClient[T]) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.logged(obj, func() error { return c.Client.Patch(ctx, obj, patch, opts...) })
}

// Status implements client.StatusClient, logging writes to a T's status.
func (c *loggingClient[T]) Status() client.SubResourceWriter {
	return &loggingStatus[T]{SubResourceWriter: c.Client.Status(), c: c}
}

// logged runs the write do to obj, logged when obj is a T.
func (c *loggingClient[T]) logged(obj client.Object, do func() error) error {
	if _, ok := obj.(T); !ok {
		return do()
	}
	w := c.writes.begin(obj, false)
	err := do()
	rv := ""
	if err == nil {
		rv = obj.GetResourceVersion()
	}
	c.writes.finish(client.ObjectKeyFromObject(obj), w, rv)
	return err
}

// loggingStatus is loggingClient's status writer.
type loggingStatus[T client.Object] struct {
	client.SubResourceWriter
	c *loggingClient[T]
}

// Update implements client.SubResourceWriter, logging a write to a T.
func (s *loggingStatus[T]) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.c.logged(obj, func() error { return s.SubResourceWriter.Update(ctx, obj, opts...) })
}

// Patch implements client.SubResourceWriter, logging a write to a T.
func (s *loggingStatus[T]) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.c.logged(obj, func() error { return s.SubResourceWriter.Patch(ctx, obj, patch, opts...) })
}

// Package writelog carries, in a reconcile's context, where kopgo's
// helpers report the writes they make to other objects than the one being
// reconciled (the Applier's applies of children), so that kopgo's loop can
// tell the watch events of those writes, which the reconcile already
// accounted for, from everyone else's. Nothing here is public API; a
// context without a log costs a helper one context lookup.
package writelog

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Log receives writes.
type Log interface {
	// Begin is called before a write to the object of kind gk at key,
	// made on version base ("": a create). Done is called with what the
	// write returned: the object's UID and version, or "" for both when it
	// failed or was not sent.
	Begin(gk schema.GroupKind, key types.NamespacedName, uid types.UID, base string) Done
}

// Done finishes a write begun with [Log.Begin].
type Done func(uid types.UID, rv string)

type key struct{}

// Into returns ctx carrying l.
func Into(ctx context.Context, l Log) context.Context { return context.WithValue(ctx, key{}, l) }

// Begin reports a write to ctx's log, if any, and returns how to finish
// it (a no-op without a log).
func Begin(ctx context.Context, gk schema.GroupKind, k types.NamespacedName, uid types.UID, base string) Done {
	if l, ok := ctx.Value(key{}).(Log); ok {
		return l.Begin(gk, k, uid, base)
	}
	return noop
}

func noop(types.UID, string) {}

// Without returns ctx without a log: the writes made under it are not
// reported, and their watch events reconcile as anyone's do.
func Without(ctx context.Context) context.Context {
	if ctx.Value(key{}) == nil {
		return ctx
	}
	return context.WithValue(ctx, key{}, nil)
}

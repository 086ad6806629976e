package finalizers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// Client is what [Add], [Remove] and [RemoveAll] need: patches, which also
// serve as fresh reads after a lost race. A client.Client (cached or not)
// and a client.Writer satisfy it.
type Client interface {
	Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error
}

var (
	_ Client = client.Client(nil)
	_ Client = client.Writer(nil)
)

// Has reports whether obj carries the finalizer name.
func Has(obj client.Object, name string) bool {
	return slices.Contains(obj.GetFinalizers(), name)
}

// Add adds the finalizer name to obj, on the server and in obj, and reports
// whether it changed anything.
//
// It judges by obj first: when obj already has the finalizer it sends no
// request. Otherwise it sends one JSON patch that tests the finalizers obj
// holds and sets them plus name; when another writer changed them in the
// meantime the patch is refused, the object re-read and the change
// recomputed (see the package documentation). On success obj holds the
// server's response.
//
// The name must be domain-qualified ([Validate]). An object being deleted
// accepts no new finalizers: Add refuses with an error of Kind Invalid when
// obj says so, and of Kind Conflict when only the server knew. An object
// that is gone is an error of Kind NotFound.
//
// opts are those of the patch (controller-runtime's client.PatchOption).
// The field manager the API server records for the finalizer entry is
// client.FieldOwner when given, else c's default (a client made with
// client.WithFieldOwner, as reconciler.Env's Client is), else the
// program's user agent.
func Add(ctx context.Context, c Client, obj client.Object, name string, opts ...client.PatchOption) (bool, error) {
	const op = "add finalizer"
	if err := Validate(name); err != nil {
		return false, koperrors.WrapKind(koperrors.Invalid, err, op, kopmeta.RefOf(obj))
	}
	changed, err := update(ctx, c, obj, opts, func(fins []string, stale bool) ([]patchOp, error) {
		if slices.Contains(fins, name) {
			return nil, nil
		}
		if kopmeta.IsBeingDeleted(obj) {
			kind := koperrors.Invalid
			if stale {
				kind = koperrors.Conflict // the caller could not know
			}
			return nil, koperrors.Errorf(kind, "the object is being deleted: the API server accepts no new finalizers")
		}
		return addOps(fins, name), nil
	})
	if err != nil {
		return changed, koperrors.Wrap(fmt.Errorf("finalizer %q: %w", name, err), op, kopmeta.RefOf(obj))
	}
	return changed, nil
}

// Remove removes the finalizer name from obj, on the server and in obj,
// leaving every other finalizer in place, and reports whether it changed
// anything.
//
// It judges by obj first: when obj does not have the finalizer it sends no
// request. Otherwise it sends one JSON patch that removes exactly the
// entries equal to name, each tested at its index first. An object that is
// already gone, or that goes away because this was its last finalizer, is a
// success.
//
// Unlike [Add], Remove accepts a name without a domain (any qualified name),
// so that a controller can retire a finalizer from before it followed the
// convention. opts are those of the patch, as for [Add].
func Remove(ctx context.Context, c Client, obj client.Object, name string, opts ...client.PatchOption) (bool, error) {
	return remove(ctx, c, obj, []string{name}, opts)
}

// RemoveAll is [Remove] for several finalizers at once, in one request,
// without patch options (c's defaults apply).
func RemoveAll(ctx context.Context, c Client, obj client.Object, names ...string) (bool, error) {
	return remove(ctx, c, obj, names, nil)
}

func remove(ctx context.Context, c Client, obj client.Object, names []string, opts []client.PatchOption) (bool, error) {
	const op = "remove finalizer"
	for _, name := range names {
		if msgs := validation.IsQualifiedName(name); len(msgs) > 0 {
			return false, koperrors.WrapKind(koperrors.Invalid,
				fmt.Errorf("finalizer %q: %s", name, strings.Join(msgs, "; ")), op, kopmeta.RefOf(obj))
		}
	}
	changed, err := update(ctx, c, obj, opts, func(fins []string, _ bool) ([]patchOp, error) {
		return removeOps(fins, names), nil
	})
	switch {
	case koperrors.KindOf(err) == koperrors.NotFound:
		return false, nil // gone: nothing is left to finalize
	case err != nil:
		return changed, koperrors.Wrap(fmt.Errorf("finalizer %s: %w", quoted(names), err), op, kopmeta.RefOf(obj))
	}
	return changed, nil
}

// Validate checks a finalizer name for [Add]: a qualified name with a
// domain prefix, such as "example.com/cleanup". The API server accepts a
// bare word with only a warning, but two controllers that pick the same
// word remove each other's finalizer. The error is of Kind Invalid and
// names the value.
func Validate(name string) error {
	if msgs := validation.IsQualifiedName(name); len(msgs) > 0 {
		return koperrors.Errorf(koperrors.Invalid, "finalizer %q: %s", name, strings.Join(msgs, "; "))
	}
	if !strings.Contains(name, "/") {
		return koperrors.Errorf(koperrors.Invalid, "finalizer %q: must be domain-qualified, e.g. example.com/%s", name, name)
	}
	return nil
}

func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

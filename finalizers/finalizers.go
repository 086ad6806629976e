package finalizers

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/observability"
)

// Client is what Add and Remove need: client.Client satisfies it.
type Client interface {
	Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error
	Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error
}

// maxAttempts bounds the retries when other writers keep changing the
// finalizers between our read and our patch.
const maxAttempts = 20

// retryDelay is 0 for the first retry, then grows with jitter up to ~50ms.
func retryDelay(attempt int) time.Duration {
	if attempt == 0 {
		return 0
	}
	d := time.Duration(min(attempt, 10)) * 5 * time.Millisecond
	return d/2 + rand.N(d)
}

// Has reports whether obj carries the finalizer name.
func Has(obj client.Object, name string) bool {
	return slices.Contains(obj.GetFinalizers(), name)
}

// Add adds the finalizer name to obj on the server and in obj. It sends no
// request when obj already has it, and one in the common case. It reports
// whether it changed anything.
func Add(ctx context.Context, c Client, obj client.Object, name string) (bool, error) {
	if err := Validate(name); err != nil {
		return false, koperrors.WrapKind(koperrors.Invalid, err, "add finalizer", koperrors.ObjectOf(obj))
	}
	changed, err := update(ctx, c, obj, func(fins []string) []string {
		if slices.Contains(fins, name) {
			return nil
		}
		return append(slices.Clone(fins), name)
	})
	return changed, koperrors.Wrap(err, "add finalizer "+name, koperrors.ObjectOf(obj))
}

// Remove removes the finalizer name from obj on the server and in obj,
// leaving every other finalizer in place. It sends no request when obj does
// not have it. An object that is already gone, or that goes away because this
// was its last finalizer, is a success.
func Remove(ctx context.Context, c Client, obj client.Object, name string) (bool, error) {
	return RemoveAll(ctx, c, obj, name)
}

// RemoveAll is [Remove] for several finalizers at once, in one request.
func RemoveAll(ctx context.Context, c Client, obj client.Object, names ...string) (bool, error) {
	for _, name := range names {
		if err := Validate(name); err != nil {
			return false, koperrors.WrapKind(koperrors.Invalid, err, "remove finalizer", koperrors.ObjectOf(obj))
		}
	}
	changed, err := update(ctx, c, obj, func(fins []string) []string {
		kept := slices.DeleteFunc(slices.Clone(fins), func(f string) bool { return slices.Contains(names, f) })
		if len(kept) == len(fins) {
			return nil
		}
		return kept
	})
	if koperrors.IsNotFound(err) {
		return false, nil
	}
	return changed, koperrors.Wrap(err, "remove finalizers "+strings.Join(names, ", "), koperrors.ObjectOf(obj))
}

// Validate checks a finalizer name: a qualified name with a domain prefix,
// such as "example.com/cleanup".
func Validate(name string) error {
	if msgs := validation.IsQualifiedName(name); len(msgs) > 0 {
		return fmt.Errorf("finalizer %q: %s", name, strings.Join(msgs, "; "))
	}
	if !strings.Contains(name, "/") {
		return fmt.Errorf("finalizer %q: must be domain-qualified, e.g. example.com/%s", name, name)
	}
	return nil
}

// update computes the desired finalizers from the ones obj has (change
// returns nil for "nothing to do") and writes them with a JSON patch that
// first tests the list it started from. The test makes the write atomic
// against other finalizer writers without a resourceVersion precondition,
// so writers of any other field never cause a retry.
func update(ctx context.Context, c Client, obj client.Object, change func([]string) []string) (changed bool, err error) {
	ctx, span := observability.StartSpan(ctx, "finalizers")
	defer func() {
		span.SetAttributes(attribute.Bool("kopgo.finalizers.changed", changed))
		observability.EndSpan(span, "", err)
	}()
	for attempt := range maxAttempts {
		current := obj.GetFinalizers()
		desired := change(current)
		if desired == nil {
			return false, nil
		}
		patch, err := testAndSet(current, desired)
		if err != nil {
			return false, err
		}
		err = c.Patch(ctx, obj, patch)
		if err == nil {
			return true, nil
		}
		// 422 when the test failed: someone else changed the finalizers.
		// Wait a little (jittered, growing), read them again and recompute
		// at once, so the list the next patch tests is as fresh as it can be.
		if !koperrors.IsInvalid(err) {
			return false, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(retryDelay(attempt)):
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
	}
	return false, koperrors.Errorf(koperrors.Conflict, "finalizers kept changing under %d attempts", maxAttempts)
}

type jsonPatchOp struct {
	Op    string   `json:"op"`
	Path  string   `json:"path"`
	Value []string `json:"value"`
}

func testAndSet(current, desired []string) (client.Patch, error) {
	if len(current) == 0 {
		current = nil // the server's JSON has no list, or an empty one: test for null
	}
	ops := []jsonPatchOp{
		{Op: "test", Path: "/metadata/finalizers", Value: current},
		{Op: "add", Path: "/metadata/finalizers", Value: desired},
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, koperrors.WrapKind(koperrors.Serialization, err, "encode finalizer patch", koperrors.Object{})
	}
	return client.RawPatch(types.JSONPatchType, data), nil
}

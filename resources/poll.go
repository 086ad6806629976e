package resources

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
)

// DefaultPollInterval is the interval of [Poll] and [PollUntilGone].
const DefaultPollInterval = 250 * time.Millisecond

// Condition decides from an object whether polling is done.
type Condition func(obj client.Object) (done bool, err error)

// Poll reads obj (by its namespace and name) until cond holds, an error
// other than NotFound occurs, or ctx ends. It reads every
// DefaultPollInterval, with jitter. On the deadline it returns an error of
// Kind Timeout that names the object and what was last seen, and obj holds
// the last state read.
func Poll(ctx context.Context, c client.Reader, obj client.Object, cond Condition) error {
	key := client.ObjectKeyFromObject(obj)
	var last error
	for {
		err := c.Get(ctx, key, obj)
		switch {
		case err == nil:
			done, cerr := cond(obj)
			if cerr != nil || done {
				return cerr
			}
			last = fmt.Errorf("condition not met (resourceVersion %s)", obj.GetResourceVersion())
		case koperrors.IsNotFound(err):
			last = err
		case ctx.Err() != nil:
		default:
			return koperrors.Wrap(err, "poll", koperrors.ObjectOf(obj))
		}
		if err := sleep(ctx); err != nil {
			return koperrors.WrapKind(koperrors.Timeout, fmt.Errorf("%w; last seen: %w", err, last), "poll", objectAt(obj, key))
		}
	}
}

// PollUntilGone waits until obj no longer exists (deletion finished, its
// finalizers done). A re-created object with the same name but another UID
// counts as gone.
func PollUntilGone(ctx context.Context, c client.Reader, obj client.Object) error {
	uid, key := obj.GetUID(), client.ObjectKeyFromObject(obj)
	for {
		err := c.Get(ctx, key, obj)
		switch {
		case koperrors.IsNotFound(err):
			return nil
		case err == nil && uid != "" && obj.GetUID() != uid:
			return nil
		case err != nil && ctx.Err() == nil:
			return koperrors.Wrap(err, "wait for deletion of", objectAt(obj, key))
		}
		if err := sleep(ctx); err != nil {
			return koperrors.WrapKind(koperrors.Timeout, fmt.Errorf("%w; still there with finalizers %v", err, obj.GetFinalizers()),
				"wait for deletion of", objectAt(obj, key))
		}
	}
}

func sleep(ctx context.Context) error {
	d := DefaultPollInterval/2 + rand.N(DefaultPollInterval)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

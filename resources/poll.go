package resources

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/scope"
)

// DefaultPollInterval is how often [Poll] and [PollUntilGone] read the
// object unless [Interval] says otherwise. Each wait adds up to 20% of
// jitter, so that many pollers do not read in step.
const DefaultPollInterval = 250 * time.Millisecond

// PollOptions are the options of [Poll] and [PollUntilGone]; set them with
// [PollOption] values.
type PollOptions struct {
	// Interval between reads; DefaultPollInterval when zero or negative.
	Interval time.Duration
	// AllowNotFound makes [Poll] keep polling while the object does not
	// exist (yet), instead of returning the NotFound error.
	AllowNotFound bool
	// UID makes [PollUntilGone] wait for the object with this UID only: an
	// object re-created under the same name counts as gone.
	UID types.UID
}

// PollOption sets [PollOptions].
type PollOption interface {
	// ApplyToPollOptions sets its option on o.
	ApplyToPollOptions(o *PollOptions)
}

// Interval sets the interval between reads.
type Interval time.Duration

// ApplyToPollOptions implements [PollOption].
func (i Interval) ApplyToPollOptions(o *PollOptions) { o.Interval = time.Duration(i) }

// AllowNotFound makes [Poll] wait through NotFound, for an object that
// someone else is about to create.
type AllowNotFound struct{}

// ApplyToPollOptions implements [PollOption].
func (AllowNotFound) ApplyToPollOptions(o *PollOptions) { o.AllowNotFound = true }

// ForUID makes [PollUntilGone] wait for the object with this UID only.
type ForUID types.UID

// ApplyToPollOptions implements [PollOption].
func (u ForUID) ApplyToPollOptions(o *PollOptions) { o.UID = types.UID(u) }

// Poll reads the object of type T called name in scope s until cond holds
// for it, and returns that object:
//
//	ctx, cancel := context.WithTimeout(ctx, time.Minute)
//	defer cancel()
//	web, err := resources.Poll(ctx, c, scope.Namespaced("shop"), "web",
//		func(d *appsv1.Deployment) (bool, error) { return d.Status.ReadyReplicas == *d.Spec.Replicas, nil })
//
// It stops at the context's deadline: it then returns the last object read
// (nil if none was) and an error of Kind Timeout that names the object and
// what was last seen: "poll Deployment shop/web: context deadline exceeded;
// last seen resourceVersion 812, generation 3". An error from cond ends the
// poll and is returned as it is. A missing object ends it with an error of
// Kind NotFound unless [AllowNotFound] is given; errors of Kind Unavailable
// (an API server restarting) are retried. The scope is checked once, before
// the first read.
func Poll[T any, P Object[T]](ctx context.Context, r Reader, s scope.Scope, name string, cond func(P) (bool, error), opts ...PollOption) (P, error) {
	po := pollOptions(opts)
	probe := P(new(T))
	o, err := target(r, "poll", s, probe, name)
	if err != nil {
		return nil, err
	}
	key := client.ObjectKey{Namespace: s.Namespace(), Name: name}
	var last P
	seen := "nothing: no read finished"
	for {
		obj := P(new(T)) // fresh each time: decoding into a used object would merge maps
		err := r.Get(ctx, key, obj)
		switch {
		case err == nil:
			last = obj
			done, cerr := cond(obj)
			if cerr != nil {
				return obj, cerr
			}
			if done {
				return obj, nil
			}
			seen = describe(obj)
		case koperrors.KindOf(err) == koperrors.NotFound && po.AllowNotFound:
			seen = "not found"
		case ctx.Err() == nil && !retriable(err):
			return last, koperrors.Wrap(err, "poll", o)
		case ctx.Err() == nil:
			seen = "error: " + err.Error()
		}
		if err := wait(ctx, po.Interval); err != nil {
			return last, timeout(err, "poll", o, seen)
		}
	}
}

// PollUntilGone waits until the object of type T called name in scope s no
// longer exists: deleted, finalizers done. With [ForUID] an object
// re-created under the same name counts as gone. At the context's deadline
// it returns the object as last seen and an error of Kind Timeout that says
// so, with its deletionTimestamp and finalizers: what is holding it.
func PollUntilGone[T any, P Object[T]](ctx context.Context, r Reader, s scope.Scope, name string, opts ...PollOption) (P, error) {
	po := pollOptions(opts)
	probe := P(new(T))
	o, err := target(r, "wait for deletion of", s, probe, name)
	if err != nil {
		return nil, err
	}
	key := client.ObjectKey{Namespace: s.Namespace(), Name: name}
	var last P
	seen := "nothing: no read finished"
	for {
		obj := P(new(T))
		err := r.Get(ctx, key, obj)
		switch {
		case koperrors.KindOf(err) == koperrors.NotFound:
			return nil, nil
		case err == nil && po.UID != "" && obj.GetUID() != po.UID:
			return nil, nil
		case err == nil:
			last, seen = obj, describe(obj)
		case ctx.Err() == nil && !retriable(err):
			return last, koperrors.Wrap(err, "wait for deletion of", o)
		case ctx.Err() == nil:
			seen = "error: " + err.Error()
		}
		if err := wait(ctx, po.Interval); err != nil {
			return last, timeout(err, "wait for deletion of", o, seen)
		}
	}
}

func pollOptions(opts []PollOption) PollOptions {
	var po PollOptions
	for _, opt := range opts {
		opt.ApplyToPollOptions(&po)
	}
	if po.Interval <= 0 {
		po.Interval = DefaultPollInterval
	}
	return po
}

// retriable errors do not end a poll: the server may come back.
func retriable(err error) bool {
	k := koperrors.KindOf(err)
	return k == koperrors.Unavailable || k == koperrors.Timeout
}

// describe is the state of obj a timeout reports.
func describe(obj client.Object) string {
	var b strings.Builder
	fmt.Fprintf(&b, "last seen resourceVersion %s, generation %d", obj.GetResourceVersion(), obj.GetGeneration())
	if ts := obj.GetDeletionTimestamp(); ts != nil {
		fmt.Fprintf(&b, ", deleting since %s", ts.UTC().Format(time.RFC3339))
	}
	if f := obj.GetFinalizers(); len(f) > 0 {
		fmt.Fprintf(&b, ", finalizers %v", f)
	}
	return b.String()
}

// timeout is the error at the end of the context: Kind Timeout for a
// deadline, the cause's kind for a cancellation.
func timeout(cause error, op string, o kopmeta.ObjectRef, seen string) error {
	err := fmt.Errorf("%w; %s", cause, seen)
	if errors.Is(cause, context.DeadlineExceeded) {
		return koperrors.WrapKind(koperrors.Timeout, err, op, o)
	}
	return koperrors.Wrap(err, op, o)
}

// wait sleeps for d plus up to 20% of jitter, or until ctx ends.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d + rand.N(d/5+1))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

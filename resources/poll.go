package resources

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/sleep"
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

// Interval sets the interval between reads. It is a client.ListOption as
// well, for [PollAny]; the server never sees it.
type Interval time.Duration

// ApplyToPollOptions implements [PollOption].
func (i Interval) ApplyToPollOptions(o *PollOptions) { o.Interval = time.Duration(i) }

// ApplyToList implements client.ListOption: [PollAny] reads the interval,
// and hands the other options to the list.
func (Interval) ApplyToList(*client.ListOptions) {}

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
	return pollGet(ctx, r, s, name, "poll", pollOptions(opts), func(obj P, err error) (bool, P, error) {
		if err != nil {
			return false, nil, nil
		}
		done, cerr := cond(obj)
		return done || cerr != nil, obj, cerr
	})
}

// PollUntilGone waits until the object of type T called name in scope s no
// longer exists: deleted, finalizers done. With [ForUID] an object
// re-created under the same name counts as gone. At the context's deadline
// it returns the object as last seen and an error of Kind Timeout that says
// so, with its deletionTimestamp and finalizers: what is holding it.
func PollUntilGone[T any, P Object[T]](ctx context.Context, r Reader, s scope.Scope, name string, opts ...PollOption) (P, error) {
	po := pollOptions(opts)
	return pollGet(ctx, r, s, name, "wait for deletion of", po, func(obj P, err error) (bool, P, error) {
		gone := koperrors.KindOf(err) == koperrors.NotFound ||
			err == nil && po.UID != "" && obj.GetUID() != po.UID
		return gone, nil, nil
	})
}

// pollGet is the loop of [Poll] and [PollUntilGone]: it reads the object of
// type T called name in scope s once per interval and asks end about each
// read (obj with err nil, or the read's error) until end says it is done,
// with what to return. Otherwise a read object is the one last seen, a
// NotFound is "not found" with [AllowNotFound], an error of Kind
// Unavailable or Timeout is retried and any other ends the poll, wrapped
// with op; the context's end is a Timeout that says what was last seen.
func pollGet[T any, P Object[T]](ctx context.Context, r Reader, s scope.Scope, name, op string, po PollOptions, end func(obj P, err error) (bool, P, error)) (P, error) {
	o, err := target(r, op, s, P(new(T)), name)
	if err != nil {
		return nil, err
	}
	key := client.ObjectKey{Namespace: s.Namespace(), Name: name}
	var last P
	seen := "nothing: no read finished"
	for {
		obj := P(new(T)) // fresh each time: decoding into a used object would merge maps
		err := r.Get(ctx, key, obj)
		if done, res, rerr := end(obj, err); done {
			return res, rerr
		}
		switch {
		case err == nil:
			last, seen = obj, describe(obj)
		case koperrors.KindOf(err) == koperrors.NotFound && po.AllowNotFound:
			seen = "not found"
		case ctx.Err() == nil && !retriable(err):
			return last, koperrors.Wrap(err, op, o)
		case ctx.Err() == nil:
			seen = "error: " + err.Error()
		}
		if err := wait(ctx, po.Interval); err != nil {
			return last, timeout(err, op, o, seen)
		}
	}
}

// PollAny lists the objects of type T in scope s until cond holds for one
// of them, and returns that one (the first in the list's order): "wait until
// any Pod labelled app=web is Ready".
//
//	pod, err := resources.PollAny(ctx, c, scope.Namespaced("shop"), func(p *corev1.Pod) (bool, error) {
//		return isReady(p), nil
//	}, client.MatchingLabels{"app": "web"}, resources.Interval(time.Second))
//
// opts are controller-runtime's list options, as in [List], and
// [Interval]. It sends one list per interval; an empty list is "none yet".
// At the context's deadline it returns nil and an error of Kind Timeout that
// says how many objects were last seen ("poll any Pod shop/: context
// deadline exceeded; last seen 3 objects, none matching"); an error from
// cond ends the poll and is returned as it is, with the object it was
// asked about. Errors of Kind Unavailable are retried. The scope is checked
// once, before the first list.
func PollAny[T any, P Object[T]](ctx context.Context, r Reader, s scope.Scope, cond func(P) (bool, error), opts ...client.ListOption) (P, error) {
	interval := DefaultPollInterval
	var listOpts []client.ListOption
	for _, opt := range opts {
		if i, ok := opt.(Interval); ok {
			if i > 0 {
				interval = time.Duration(i)
			}
			continue
		}
		listOpts = append(listOpts, opt)
	}
	newList, o, err := listOf[T, P](r, s)
	if err != nil {
		return nil, err
	}
	listOpts = inScope(s, listOpts)
	seen := "nothing: no list finished"
	for {
		list := newList()
		err := r.List(ctx, list, listOpts...)
		if err == nil {
			err = apimeta.EachListItem(list, func(item runtime.Object) error {
				obj, ok := item.(P)
				if !ok {
					return fmt.Errorf("list item %T is not a %T", item, P(nil))
				}
				if done, cerr := cond(obj); cerr != nil || done {
					return &found[P]{obj: obj, err: cerr}
				}
				return nil
			})
			if f, ok := errors.AsType[*found[P]](err); ok {
				return f.obj, f.err
			}
			if err == nil {
				seen = fmt.Sprintf("last seen %d objects, none matching", apimeta.LenList(list))
			}
		}
		switch {
		case err == nil:
		case ctx.Err() == nil && !retriable(err):
			return nil, koperrors.Wrap(err, "poll any", o)
		case ctx.Err() == nil:
			seen = "error: " + err.Error()
		}
		if err := wait(ctx, interval); err != nil {
			return nil, timeout(err, "poll any", o, seen)
		}
	}
}

// found ends a walk over a list's items at the one cond decided on.
type found[P any] struct {
	obj P
	err error
}

func (f *found[P]) Error() string { return "found" }

// listOf checks scope s against T's kind and returns a constructor of T's
// list type, from r's scheme, and the object errors name.
func listOf[T any, P Object[T]](r Reader, s scope.Scope) (func() client.ObjectList, kopmeta.ObjectRef, error) {
	probe := P(new(T))
	gvk, err := kindOf(r, probe)
	if err != nil {
		return nil, kopmeta.ObjectRef{Namespace: s.Namespace()}, koperrors.WrapKind(koperrors.Invalid, err, "poll any", kopmeta.ObjectRef{Namespace: s.Namespace()})
	}
	o := kopmeta.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: s.Namespace()}
	proto, err := r.Scheme().New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return nil, o, koperrors.WrapKind(koperrors.Invalid, err, "poll any", o)
	}
	list, ok := proto.(client.ObjectList)
	if !ok {
		return nil, o, koperrors.Errorf(koperrors.Invalid, "poll any %s: %T is not a list", gvk.Kind, proto)
	}
	if _, err := target(r, "poll any", s, list, ""); err != nil {
		return nil, o, err
	}
	return func() client.ObjectList { return list.DeepCopyObject().(client.ObjectList) }, o, nil
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
	return sleep.For(ctx, d+rand.N(d/5+1))
}

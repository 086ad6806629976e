package apply

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// fakeFieldOwner is a [Fake]'s field owner when it is given none.
const fakeFieldOwner = "fake-controller"

// Fake is an [Interface] for unit tests of code that applies, a reconciler
// for one: it records every apply and answers it without a cluster, as
// observability.FakeRecorder does for events. The zero value is ready to
// use; it is safe for concurrent use.
//
//	fake := &apply.Fake{}
//	err := r.Reconcile(ctx, app, &reconciler.Env{Applier: fake, ...})
//	fake.Applied() // the objects applied, in order
//
// It checks what an [Applier] checks without a server (an apiVersion and
// kind, a name, a field owner, a controller reference with a UID: errors of
// Kind Invalid naming the object) and takes the same inputs and options
// (client.FieldOwner, [Force], [AdoptOrphans], client.DryRunAll; it has no
// objects of others to refuse to take over). Each apply that passes is
// recorded and answered by Respond when set, else Created for an object the
// Fake has not applied (or was told to Forget), Unchanged for the same
// intent applied again as the same field owner, and Updated otherwise. [Result.Object] is the object as
// applied (with whatever Respond set in it); [Result.Requests] is 0.
type Fake struct {
	// Owner is the field owner applies are made as unless an apply names
	// another with client.FieldOwner; "fake-controller" when empty.
	Owner string
	// Scheme maps typed objects to their kind; client-go's scheme (the
	// built-in kinds) when nil.
	Scheme *runtime.Scheme
	// Respond, when set, answers every apply that passed the checks. obj
	// is the object as applied, a copy of its own, and opts the call's
	// options over the defaults (FieldManager, Force). Respond may change
	// obj (set its status, say): Result.Object returns it. The Outcome it
	// returns is the apply's, except the zero Outcome, which keeps the
	// Fake's own answer. A non-nil error fails the apply, wrapped as an
	// Applier wraps the API server's (Kind from the error, "apply
	// Deployment default/web: ...").
	Respond func(obj *unstructured.Unstructured, opts *client.ApplyOptions) (Outcome, error)

	mu      sync.Mutex
	applied []*unstructured.Unstructured
	last    map[recordKey]digest // intent hash of the last apply, by object
}

// FieldOwner implements [Interface]: Owner, or "fake-controller".
func (f *Fake) FieldOwner() string {
	if f.Owner == "" {
		return fakeFieldOwner
	}
	return f.Owner
}

// Apply implements [Interface]: it checks obj, records it and answers as
// [Fake] describes. obj is not modified.
func (f *Fake) Apply(_ context.Context, obj any, opts ...client.ApplyOption) (Result, error) {
	o := applyOptions(f.FieldOwner(), opts)
	scheme := f.Scheme
	if scheme == nil {
		scheme = clientgoscheme.Scheme
	}
	in, err := toIntent(obj, scheme)
	if err != nil {
		return Result{}, koperrors.WrapKind(koperrors.Invalid, err, "apply", describe(obj))
	}
	ref := kopmeta.ObjectRef{Group: in.gvk.Group, Kind: in.gvk.Kind, Namespace: in.namespace, Name: in.name}
	if err := checkIntent(in, o); err != nil {
		return Result{}, koperrors.Wrap(err, "apply", ref)
	}
	u, err := in.object()
	if err != nil {
		return Result{}, koperrors.WrapKind(koperrors.Invalid, err, "apply", ref)
	}
	u = u.DeepCopy()
	key := recordKey{gk: in.gvk.GroupKind(), namespace: in.namespace, name: in.name}
	hash, err := hashIntent(in, o)
	if err != nil {
		return Result{}, koperrors.WrapKind(koperrors.Invalid, err, "apply", ref)
	}

	f.mu.Lock()
	f.applied = append(f.applied, u.DeepCopy())
	last, seen := f.last[key]
	if !dryRun(o) {
		if f.last == nil {
			f.last = map[recordKey]digest{}
		}
		f.last[key] = hash
	}
	f.mu.Unlock()

	res := Result{Outcome: Updated, sent: u, scheme: scheme}
	switch {
	case !seen:
		res.Outcome = Created
	case last == hash:
		res.Outcome = Unchanged
	}
	if f.Respond != nil {
		out, err := f.Respond(u, o)
		if err != nil {
			return Result{}, koperrors.Wrap(err, "apply", ref)
		}
		if out != 0 {
			res.Outcome = out
		}
	}
	return res, nil
}

// Forget implements [Interface]: the next apply of obj (its kind,
// namespace and name) is answered as a first one.
func (f *Fake) Forget(obj client.Object) {
	scheme := f.Scheme
	if scheme == nil {
		scheme = clientgoscheme.Scheme
	}
	in, err := toIntent(obj, scheme)
	if err != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.last, recordKey{gk: in.gvk.GroupKind(), namespace: in.namespace, name: in.name})
}

// Applied returns every object applied so far, in order: each apply that
// passed the checks, dry runs and those Respond failed included, as the
// unstructured object sent (a copy the caller owns).
func (f *Fake) Applied() []*unstructured.Unstructured {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*unstructured.Unstructured, len(f.applied))
	for i, u := range f.applied {
		out[i] = u.DeepCopy()
	}
	return out
}

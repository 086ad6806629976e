package reconciler

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// WithFinalize gives [Sync] a finalize function (roperator's finalize,
// Metacontroller's finalize hook): the parent gets a finalizer, and once it
// is being deleted, fn runs with the parent and its observed children
// instead of the sync function. The finalizer is removed when fn returns
// nil. fn reports that it is not done yet by returning
// koperrors.RequeueAfter(nil, d): it runs again after d (the parent is
// Reconciling meanwhile, and no error is logged or counted); any other
// error is retried with backoff and shown in the parent's status.
//
// fn may run more than once for one deletion (not done yet, an error, a
// restart of the operator between its success and the finalizer's removal),
// so make its side effects idempotent: delete what is there, treat "already
// gone" as done. Children need no finalize function: the garbage collector
// deletes them once the parent is gone.
//
// T must be Sync's parent type; another is a Config error of every
// Reconcile. Without WithFinalize a Sync parent gets no finalizer.
//
// Why an error rather than a "done" boolean: it is the contract of the sync
// function (RequeueAfter(nil, d) is "come back later" there too) and of
// [Finalizer], and it says when to come back, which a boolean cannot.
func WithFinalize[T client.Object](fn func(ctx context.Context, parent T, observed Children) error) SyncOption {
	return func(o *syncOptions) { o.finalize = fn }
}

// Cleanup implements [Finalizer]: it runs the finalize function given to
// [WithFinalize] with the parent's observed children. The Adapter calls it
// only for a Syncer with a finalize function.
func (s *Syncer[T]) Cleanup(ctx context.Context, parent T, env *Env) error {
	if s.finalize == nil {
		return nil
	}
	kinds, labelKey, err := s.setup(parent, env)
	if err != nil {
		return koperrors.Wrap(err, "finalize", kopmeta.RefOf(parent))
	}
	observed, _, err := s.observe(ctx, parent, env, kinds, labelKey)
	if err != nil {
		s.resolved.Store(nil) // look the kinds up again next time
		return koperrors.Wrap(err, "finalize", kopmeta.RefOf(parent))
	}
	return s.finalize(ctx, parent, observed)
}

// usesFinalizer tells the Adapter whether this Syncer needs a finalizer:
// only with a finalize function.
func (s *Syncer[T]) usesFinalizer() bool { return s.finalize != nil }

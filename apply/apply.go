package apply

import (
	"context"
	stderrors "errors"
	"fmt"
	"net/http"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/telemetry"
	"github.com/kopgo/kopgo/internal/writelog"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// Apply server-side applies obj, which is one of:
//
//   - a client-go apply configuration (runtime.ApplyConfiguration, such as
//     appsv1ac.Deployment("web", ns).WithSpec(...)): the recommended form;
//   - an *unstructured.Unstructured holding only the fields the caller means
//     to own;
//   - a typed object (client.Object, such as *appsv1.Deployment), pruned of
//     what the caller did not set (see the package documentation).
//
// obj is not modified. Problems visible locally (no kind, no name, a kind the
// server does not serve, a namespace where the kind has none or none where
// it needs one) are errors of Kind Invalid and send no apply request. A
// field-manager conflict is an error of Kind Invalid whose chain holds a
// [*ConflictError] naming the fields and their managers; it is terminal
// (koperrors.IsTerminal): see ConflictError.
//
// The options are controller-runtime's: the apply is made as the Applier's
// field owner unless client.FieldOwner names another, forces ownership
// only with [Force](true) or client.ForceOwnership (see [Force]), and client.DryRunAll makes
// it a dry run (always sent, never remembered).
//
// Each call is a span named "apply" under the span in ctx (no cost without
// tracing), and with [WithMetrics] its outcome is counted in
// kopgo_apply_total (dry runs excepted).
func (a *Applier) Apply(ctx context.Context, obj any, opts ...client.ApplyOption) (res Result, err error) {
	o := applyOptions(a.fieldOwner, opts)
	ctx, span := telemetry.StartSpan(ctx, "apply")
	defer func() {
		span.SetAttributes(attribute.String("kopgo.apply.outcome", res.Outcome.String()), attribute.Int("kopgo.apply.requests", res.Requests))
		if err == nil && !dryRun(o) && a.metrics != nil {
			a.metrics.RecordApply(a.controller, res.Outcome.String())
		}
		telemetry.EndSpan(span, "", err)
	}()
	in, err := toIntent(obj, a.scheme)
	if err != nil {
		return Result{}, koperrors.WrapKind(koperrors.Invalid, err, "apply", describe(obj))
	}
	ref := kopmeta.ObjectRef{Group: in.gvk.Group, Kind: in.gvk.Kind, Namespace: in.namespace, Name: in.name}
	span.SetAttributes(telemetry.ObjectAttrs(ref.Kind, ref.Namespace, ref.Name)...)
	res, err = a.apply(ctx, in, o, adoptsOrphans(opts), givenCurrent(opts, in, a.scheme))
	if err != nil {
		if _, ok := stderrors.AsType[*TakeoverError](err); ok {
			return res, koperrors.WrapKind(koperrors.Invalid, err, "apply", ref)
		}
		if ce := asConflictError(err); ce != nil {
			return res, koperrors.WrapKind(koperrors.Invalid, ce, "apply", ref)
		}
		return res, koperrors.Wrap(err, "apply", ref)
	}
	return res, nil
}

// apply is [Applier.Apply] once the input is an intent. Its errors are
// wrapped by the caller.
func (a *Applier) apply(ctx context.Context, in *intent, o *client.ApplyOptions, adopt bool, given client.Object) (Result, error) {
	gvk := in.gvk
	if err := a.validate(in, o); err != nil {
		return Result{}, err
	}
	key := recordKey{gk: gvk.GroupKind(), namespace: in.namespace, name: in.name}
	hash, err := hashIntent(in, o)
	if err != nil {
		return Result{}, koperrors.WrapKind(koperrors.Invalid, err, "", kopmeta.ObjectRef{})
	}
	rec, remembered := a.records.get(key)
	owner := in.owner
	requests := 0

	// What is there now? The cache's copy, free. When the intent claims
	// the object with a controller reference and neither the cache nor
	// our record can tell whose it is, the API server's (one request).
	live, fromCache, err := given, true, error(nil)
	if given == nil {
		live, fromCache, err = a.lookCache(ctx, in)
	}
	seen := fromCache // whether live (nil: absent) is the object's state
	if err != nil {
		// A cache that cannot answer costs the shortcut, not the apply.
		log.FromContext(ctx).V(1).Info("Cache read failed, applying anyway", "object", klog.KRef(in.namespace, in.name), "kind", gvk.Kind, "error", err.Error())
	}
	ours := remembered && owner != nil && rec.controller == uidOf(owner.UID)
	// The cache's word is doubtful when it says there is no object we
	// remember: it may lag behind the object's creation.
	doubt := !seen || (live == nil && remembered)
	if owner != nil && !adopt && !ours && doubt {
		live, requests, err = a.readLive(ctx, in)
		if err != nil {
			return Result{Requests: requests}, fmt.Errorf("read the object to learn its controller before applying a controller reference (the cache cannot tell; AdoptOrphans(true) skips this): %w", err)
		}
	}
	if remembered && live != nil && rec.uid != uidOf(live.GetUID()) {
		a.records.forget(key) // deleted and recreated since
		remembered, ours = false, false
	}
	if remembered && rec.disputed != "" && owner != nil && !adopt {
		// Our takeover of someone else's object is not undone yet.
		return a.undoTakeover(ctx, in, o, key, hash, requests)
	}
	// believed is the UID of the object this apply may claim: the one
	// seen, else (the cache lags behind our own creation) the one our
	// record says we claimed.
	var believed uid
	if live != nil && owner != nil {
		if terr := refusal(live, owner, adopt, ours); terr != nil {
			return a.refuse(ctx, in, o, terr, requests)
		}
		believed = uidOf(live.GetUID())
	} else if ours {
		believed = rec.uid
	}

	// Unchanged without a request when the cache's copy proves it (see
	// [Applier.unchanged]).
	if live != nil && fromCache && !dryRun(o) && a.unchanged(in, o, key, hash, live, rec, remembered) {
		return Result{Outcome: Unchanged, live: live, gvk: gvk, scheme: a.scheme}, nil
	}

	// An apply that returns a resourceVersion known before wrote nothing.
	var known []string
	if live != nil {
		known = append(known, live.GetResourceVersion())
	}
	if remembered {
		known = append(known, rec.resourceVersion)
	}
	u, err := in.object()
	if err != nil {
		return Result{Requests: requests}, koperrors.WrapKind(koperrors.Invalid, err, "", kopmeta.ObjectRef{})
	}
	// kopgo's loop, if it runs this apply, learns of it: the watch event
	// it causes is accounted for by the reconcile that made it.
	done := writelog.Done(nil)
	if !dryRun(o) {
		var uid types.UID
		base := ""
		if live != nil {
			uid, base = live.GetUID(), live.GetResourceVersion()
		}
		done = writelog.Begin(ctx, gvk.GroupKind(), types.NamespacedName{Namespace: in.namespace, Name: in.name}, uid, base)
	}
	xctx, x := withExchange(ctx)
	err = a.client.Apply(xctx, client.ApplyConfigurationFromUnstructured(u), o)
	res := Result{Requests: requests + int(x.requests.Load())}
	if done != nil {
		if err != nil {
			done("", "")
		} else {
			done(u.GetUID(), u.GetResourceVersion())
		}
	}
	if err != nil {
		return res, err
	}
	created := x.status.Load() == http.StatusCreated
	if owner != nil && !adopt && !created && uidOf(u.GetUID()) != believed {
		// The apply met an object other than the one it may claim: one
		// someone else created after we looked (server-side apply has no
		// create-only precondition), and it took that object over.
		if dryRun(o) {
			return res, &TakeoverError{Owner: *owner, Appeared: true, Manager: otherManager(u, o.FieldManager)}
		}
		return a.undoTakeoverOf(ctx, in, o, key, hash, u, res.Requests)
	}
	res.sent, res.scheme = u, a.scheme
	switch {
	case created:
		res.Outcome = Created
	case dryRun(o):
		// A dry run does not move the resourceVersion; compare the answer
		// with the cache's copy of the same version instead.
		res.Outcome = Updated
		if live != nil && fromCache && live.GetResourceVersion() == u.GetResourceVersion() && a.sameObject(live, u, gvk) {
			res.Outcome = Unchanged
		}
	case slices.Contains(known, u.GetResourceVersion()):
		res.Outcome = Unchanged
	default:
		// The resourceVersion moved, or nothing was known before (the first
		// apply to an existing object, without a cache): see the package
		// documentation.
		res.Outcome = Updated
	}
	if !dryRun(o) {
		a.records.put(key, record{uid: uidOf(u.GetUID()), resourceVersion: u.GetResourceVersion(), intent: hash, controller: uidOf(types.UID(controllerUID(u)))})
	}
	return res, nil
}

// unchanged reports whether the cache's copy live proves that applying in
// would change nothing, by three proofs, the cheapest first:
//
//   - our record: we applied the same intent, and live is at the
//     resourceVersion that apply returned;
//   - ownership: we applied the same intent to this object (UID), and our
//     managedFields entry in live still owns the fields it owned when the
//     cache first showed that apply: a value someone else changed since
//     would have moved its field to them. This holds whatever the server filled in (defaults inside
//     an atomic field such as a StatefulSet's volumeClaimTemplates, or a
//     Service port's targetPort), which the values cannot tell;
//   - the values ([liveHolds]): our entry owns exactly the intent's fields,
//     and live holds the intent's value in each. Not used when we last
//     applied another intent at a version the cache does not hold: the
//     cache may not have our write yet, and an older copy may hold this
//     intent (a revert) while the server holds the other.
//
// A proof by ownership or values is remembered as a record of live's
// resourceVersion, so that the next apply of the same intent takes the
// first proof.
func (a *Applier) unchanged(in *intent, o *client.ApplyOptions, key recordKey, hash digest, live client.Object, rec record, remembered bool) bool {
	sameIntent := remembered && rec.intent == hash
	sameVersion := remembered && rec.resourceVersion == live.GetResourceVersion()
	apiVersion := func() string { return in.gvk.GroupVersion().String() }
	if sameIntent && sameVersion {
		if rec.fields == (digest{}) {
			// The cache shows our write for the first time: fingerprint
			// our fields for the ownership proof.
			if rec.fields, _ = ownFields(live, o.FieldManager, apiVersion()); rec.fields != (digest{}) {
				a.records.put(key, rec)
			}
		}
		return true
	}
	if sameIntent && rec.fields != (digest{}) {
		if fields, ok := ownFields(live, o.FieldManager, apiVersion()); ok && fields == rec.fields {
			rec.resourceVersion = live.GetResourceVersion()
			a.records.put(key, rec)
			return true
		}
	}
	if remembered && !sameVersion && !sameIntent {
		return false // our own last write of another intent may not be cached yet
	}
	u, err := in.object()
	if err != nil || !liveHolds(u, live, o.FieldManager) {
		return false
	}
	fields, _ := ownFields(live, o.FieldManager, apiVersion())
	a.records.put(key, record{uid: uidOf(live.GetUID()), resourceVersion: live.GetResourceVersion(), intent: hash, fields: fields, controller: uidOf(types.UID(controllerUID(live)))})
	return true
}

// lookCache reads the object of in's name from the cache: nil, true when
// the cache says there is none; nil, false when there is no cache or it
// could not answer (err).
func (a *Applier) lookCache(ctx context.Context, in *intent) (client.Object, bool, error) {
	if a.cache == nil {
		return nil, false, nil
	}
	live, err := a.readCache(ctx, in.gvk, client.ObjectKey{Namespace: in.namespace, Name: in.name})
	switch {
	case apierrors.IsNotFound(err):
		return nil, true, nil
	case err != nil:
		return nil, false, err
	}
	return live, true, nil
}

// readLive reads the object of in's name from the API server (nil when
// there is none), with a get or, for a kind the Applier may not get, a list
// by name (see internal/liveread), and returns the requests that took.
func (a *Applier) readLive(ctx context.Context, in *intent) (client.Object, int, error) {
	xctx, x := withExchange(ctx)
	obj, err := a.live.Read(xctx, a.client, in.gvk, client.ObjectKey{Namespace: in.namespace, Name: in.name},
		func() client.Object { return a.newObject(in.gvk) },
		func() client.ObjectList { return a.newList(in.gvk) })
	return obj, int(x.requests.Load()), err
}

// newList returns an empty list of kind gvk: typed when the scheme knows
// the list kind, else unstructured.
func (a *Applier) newList(gvk schema.GroupVersionKind) client.ObjectList {
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	if obj, err := a.scheme.New(listGVK); err == nil {
		if l, ok := obj.(client.ObjectList); ok {
			return l
		}
	}
	u := &unstructured.UnstructuredList{}
	u.SetGroupVersionKind(listGVK)
	return u
}

// undoTakeoverOf undoes the takeover of taken, an object someone else
// created while the apply of in created it ([Applier.disown]), remembers
// the outcome and returns the [*TakeoverError] that reports it.
func (a *Applier) undoTakeoverOf(ctx context.Context, in *intent, o *client.ApplyOptions, key recordKey, hash digest, taken *unstructured.Unstructured, requests int) (Result, error) {
	u, n, err := a.disown(ctx, in, o, in.owner, taken)
	requests += n
	if u == nil {
		// Still ours by accident: the next apply tries again.
		a.records.put(key, record{uid: uidOf(taken.GetUID()), resourceVersion: taken.GetResourceVersion(), intent: hash, disputed: taken.GetUID()})
		return Result{Requests: requests}, err
	}
	a.records.put(key, record{uid: uidOf(u.GetUID()), resourceVersion: u.GetResourceVersion(), controller: uidOf(types.UID(controllerUID(u)))})
	return Result{Requests: requests}, err
}

// undoTakeover retries the undoing of an earlier accidental takeover.
func (a *Applier) undoTakeover(ctx context.Context, in *intent, o *client.ApplyOptions, key recordKey, hash digest, requests int) (Result, error) {
	u, err := in.object()
	if err != nil {
		return Result{Requests: requests}, koperrors.WrapKind(koperrors.Invalid, err, "", kopmeta.ObjectRef{})
	}
	taken := u.DeepCopy()
	rec, _ := a.records.get(key)
	taken.SetUID(rec.disputed)
	taken.SetResourceVersion(rec.resourceVersion)
	return a.undoTakeoverOf(ctx, in, o, key, hash, taken, requests)
}

// readCache reads the live object from the cache, in its typed form when
// the scheme knows the kind (so the caller's typed informer answers), else
// as unstructured.
//
// The object is the cache's own, not a copy (client.UnsafeDisableDeepCopy):
// the Applier only reads it, and [Result.Object] and [Result.Into] hand
// the caller a copy. A converged reconcile's reads of its children then
// copy nothing. Its TypeMeta is what the cache holds, which for a typed
// object is usually empty.
func (a *Applier) readCache(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) (client.Object, error) {
	live := a.newObject(gvk)
	if err := a.cache.Get(ctx, key, live, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return live, nil
}

// newObject returns an empty object of kind gvk: typed when the scheme
// knows the kind, else unstructured.
func (a *Applier) newObject(gvk schema.GroupVersionKind) client.Object {
	if obj, err := a.scheme.New(gvk); err == nil {
		if co, ok := obj.(client.Object); ok {
			return co
		}
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// sameObject reports whether the server's answer u is semantically the
// cached object live, comparing in live's form (typed or unstructured).
func (a *Applier) sameObject(live client.Object, u *unstructured.Unstructured, gvk schema.GroupVersionKind) bool {
	if lu, ok := live.(*unstructured.Unstructured); ok {
		return apiequality.Semantic.DeepEqual(lu.Object, u.Object)
	}
	got, err := a.scheme.New(gvk)
	if err != nil {
		return false
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, got); err != nil {
		return false
	}
	got.GetObjectKind().SetGroupVersionKind(live.GetObjectKind().GroupVersionKind())
	return apiequality.Semantic.DeepEqual(live, got)
}

// describe names an input that could not be turned into an intent.
func describe(obj any) kopmeta.ObjectRef {
	if co, ok := obj.(client.Object); ok && co != nil {
		return kopmeta.RefOf(co)
	}
	return kopmeta.ObjectRef{Kind: fmt.Sprintf("%T", obj)}
}

package apply

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/telemetry"
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
// [*ConflictError] naming the fields and their managers.
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
			(*telemetry.Metrics)(a.metrics).RecordApply(a.controller, res.Outcome.String())
		}
		telemetry.EndSpan(span, "", err)
	}()
	in, err := toIntent(obj, a.scheme)
	if err != nil {
		return Result{}, koperrors.WrapKind(koperrors.Invalid, err, "apply", describe(obj))
	}
	ref := kopmeta.ObjectRef{Group: in.gvk.Group, Kind: in.gvk.Kind, Namespace: in.namespace, Name: in.name}
	span.SetAttributes(telemetry.ObjectAttrs(ref.Kind, ref.Namespace, ref.Name)...)
	return a.apply(ctx, in, ref, o)
}

// apply is [Applier.Apply] once the input is an intent.
func (a *Applier) apply(ctx context.Context, in *intent, ref kopmeta.ObjectRef, o *client.ApplyOptions) (Result, error) {
	gvk := in.gvk
	if err := a.validate(in, o); err != nil {
		return Result{}, koperrors.Wrap(err, "apply", ref)
	}
	key := recordKey{gk: gvk.GroupKind(), namespace: in.namespace, name: in.name}
	hash := hashIntent(in, o)

	// What was the object before? The cache's copy and our record of the
	// last apply, both free. An apply that returns one of their
	// resourceVersions wrote nothing.
	var known []string
	var live client.Object
	rec, remembered := a.records.get(key)
	if a.cache != nil {
		var err error
		live, err = a.readCache(ctx, gvk, client.ObjectKey{Namespace: in.namespace, Name: in.name})
		switch {
		case apierrors.IsNotFound(err):
			a.records.forget(key)
			remembered = false
		case err != nil:
			// A cache that cannot answer costs the shortcut, not the apply.
			log.FromContext(ctx).V(1).Info("Cache read failed, applying anyway", "object", klog.KRef(in.namespace, in.name), "kind", gvk.Kind, "error", err.Error())
			live = nil
		case remembered && rec.uid != live.GetUID():
			a.records.forget(key) // deleted and recreated since
			remembered = false
			known = append(known, live.GetResourceVersion())
		default:
			known = append(known, live.GetResourceVersion())
		}
		// Unchanged without a request when the cache's copy proves it: by
		// our record of applying the same intent at its resourceVersion
		// (free), or else by its own managedFields and values. Not the
		// latter when we last applied another intent at a version the
		// cache does not hold: the cache may not have our write yet, and
		// an older copy may hold this intent (a revert) while the server
		// holds the other.
		if live != nil && !dryRun(o) {
			sameVersion := remembered && rec.resourceVersion == live.GetResourceVersion()
			if sameVersion && rec.intent == hash {
				return Result{Outcome: Unchanged, live: live, gvk: gvk}, nil
			}
			ownWriteUnseen := remembered && !sameVersion && rec.intent != hash
			if u, err := in.object(); err == nil && !ownWriteUnseen && liveHolds(u, live, o.FieldManager) {
				a.records.put(key, record{uid: live.GetUID(), resourceVersion: live.GetResourceVersion(), intent: hash})
				return Result{Outcome: Unchanged, live: live, gvk: gvk}, nil
			}
		}
	}
	if remembered {
		known = append(known, rec.resourceVersion)
	}

	u, err := in.object()
	if err != nil {
		return Result{}, koperrors.WrapKind(koperrors.Invalid, err, "apply", ref)
	}
	xctx, x := withExchange(ctx)
	err = a.client.Apply(xctx, client.ApplyConfigurationFromUnstructured(u), o)
	res := Result{Requests: int(x.requests.Load())}
	if err != nil {
		if ce := asConflictError(err); ce != nil {
			return res, koperrors.WrapKind(koperrors.Invalid, ce, "apply", ref)
		}
		return res, koperrors.Wrap(err, "apply", ref)
	}
	res.sent = u
	switch {
	case x.status.Load() == http.StatusCreated:
		res.Outcome = Created
	case dryRun(o):
		// A dry run does not move the resourceVersion; compare the answer
		// with the cache's copy of the same version instead.
		res.Outcome = Updated
		if live != nil && live.GetResourceVersion() == u.GetResourceVersion() && a.sameObject(live, u, gvk) {
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
		a.records.put(key, record{uid: u.GetUID(), resourceVersion: u.GetResourceVersion(), intent: hash})
	}
	return res, nil
}

// readCache reads the live object from the cache, in its typed form when
// the scheme knows the kind (so the caller's typed informer answers), else
// as unstructured.
func (a *Applier) readCache(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) (client.Object, error) {
	var live client.Object
	if obj, err := a.scheme.New(gvk); err == nil {
		live, _ = obj.(client.Object)
	}
	if live == nil {
		pu := &unstructured.Unstructured{}
		pu.SetGroupVersionKind(gvk)
		live = pu
	}
	if err := a.cache.Get(ctx, key, live); err != nil {
		return nil, err
	}
	return live, nil
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

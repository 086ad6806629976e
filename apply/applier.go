package apply

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/observability"
)

// Result is what an apply did.
type Result struct {
	// Outcome is Created, Updated or Unchanged.
	Outcome Outcome
	// Object is the object as the server returned it; nil when no request
	// was sent (Unchanged from the cache).
	Object *unstructured.Unstructured
	// Requests is the number of API requests the apply sent: 0 or 1.
	Requests int
}

// Applier applies desired state with server-side apply under one field
// owner and remembers what it applied, so that applying the same intent to
// an object nobody changed costs nothing. It is safe for concurrent use.
type Applier struct {
	client     client.Client
	fieldOwner string
	scheme     *runtime.Scheme
	cache      client.Reader
	records    *records
	metrics    *observability.Metrics
	controller string
}

// New returns an Applier that sends its requests with cfg under fieldOwner.
// It builds its own client on cfg (sharing nothing mutable with the
// caller's) so that it can see the HTTP status of each apply: 201 means
// Created. A manager user passes mgr.GetConfig() and WithCache(mgr.GetCache()).
func New(cfg *rest.Config, fieldOwner string, opts ...ApplierOption) (*Applier, error) {
	if fieldOwner == "" {
		return nil, koperrors.Errorf(koperrors.Config, "apply: a field owner is required")
	}
	c := config{scheme: clientgoscheme.Scheme, maxRecords: 10000}
	for _, o := range opts {
		o(&c)
	}
	cfg = rest.CopyConfig(cfg)
	inner := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if inner != nil {
			rt = inner(rt)
		}
		return statusRecorder{next: rt}
	}
	cl, err := client.New(cfg, client.Options{Scheme: c.scheme})
	if err != nil {
		return nil, koperrors.Wrap(err, "create apply client", koperrors.Object{})
	}
	return &Applier{
		client: cl, fieldOwner: fieldOwner, scheme: c.scheme, cache: c.cache, records: newRecords(max(c.maxRecords, 1)),
		metrics: c.metrics, controller: c.controller,
	}, nil
}

// FieldOwner returns the field manager name the Applier applies as.
func (a *Applier) FieldOwner() string { return a.fieldOwner }

// Apply server-side applies obj: a client-go apply configuration, an
// *unstructured.Unstructured holding only the fields the caller means to own,
// or a typed object (see the package documentation for what a typed object
// owns). Problems visible locally (no kind, no name, a kind the server does
// not serve, a namespace where the kind has none or none where it needs one)
// are errors of Kind Invalid and send nothing.
func (a *Applier) Apply(ctx context.Context, obj any, opts ...Option) (res Result, err error) {
	var o Options
	for _, opt := range opts {
		opt.ApplyToOptions(&o)
	}
	ctx, span := observability.StartSpan(ctx, "apply")
	defer func() {
		span.SetAttributes(attribute.String("kopgo.apply.outcome", res.Outcome.String()), attribute.Int("kopgo.apply.requests", res.Requests))
		if err == nil && !o.DryRun && a.metrics != nil {
			a.metrics.RecordApply(a.controller, res.Outcome.String())
		}
		observability.EndSpan(span, "", err)
	}()
	u, err := toIntent(obj, a.scheme)
	if err != nil {
		return Result{}, koperrors.WrapKind(koperrors.Invalid, err, "apply", describe(obj))
	}
	ref := koperrors.Object{GroupVersionKind: u.GroupVersionKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
	span.SetAttributes(attribute.String("k8s.object.kind", ref.Kind), attribute.String("k8s.namespace.name", ref.Namespace), attribute.String("k8s.object.name", ref.Name))
	if err := a.validate(u); err != nil {
		return Result{}, koperrors.WrapKind(koperrors.Invalid, err, "apply", ref)
	}
	key := recordKey(u)
	hash, err := hashIntent(u, o)
	if err != nil {
		return Result{}, koperrors.WrapKind(koperrors.Serialization, err, "apply", ref)
	}

	// What was the object before? Our record of the last apply, and the
	// cache (no request). Either may be behind the server; an apply that
	// returns one of these versions changed nothing.
	var known []string
	rec, remembered := a.records.get(key)
	if a.cache != nil && !o.DryRun {
		live, found, err := a.readCache(ctx, u)
		switch {
		case err != nil:
			// A cache that cannot answer costs us the shortcut, not the apply.
		case !found:
			a.records.forget(key)
			remembered = false
		default:
			known = append(known, live.GetResourceVersion())
			if remembered && rec.intent == hash && rec.uid == live.GetUID() && rec.resourceVersion == live.GetResourceVersion() {
				return Result{Outcome: Unchanged}, nil
			}
		}
	}
	if remembered {
		known = append(known, rec.resourceVersion)
	}

	code := new(int)
	applyOpts := []client.ApplyOption{client.FieldOwner(a.fieldOwner)}
	if o.Force {
		applyOpts = append(applyOpts, client.ForceOwnership)
	}
	if o.DryRun {
		applyOpts = append(applyOpts, client.DryRunAll)
	}
	if err := a.client.Apply(context.WithValue(ctx, statusKey{}, code), client.ApplyConfigurationFromUnstructured(u), applyOpts...); err != nil {
		return Result{Requests: 1}, koperrors.WrapKind(kindOfApplyError(err), err, "apply", ref)
	}
	res = Result{Object: u, Requests: 1}
	switch {
	case *code == http.StatusCreated:
		res.Outcome = Created
	case slices.Contains(known, u.GetResourceVersion()):
		res.Outcome = Unchanged
	default:
		// Changed, or no earlier state was known (see the package docs).
		res.Outcome = Updated
	}
	if !o.DryRun {
		a.records.put(key, record{uid: u.GetUID(), resourceVersion: u.GetResourceVersion(), intent: hash})
	}
	return res, nil
}

// Forget drops what the Applier remembers about obj, as when the caller
// knows it was deleted.
func (a *Applier) Forget(obj client.Object) {
	gvk, err := apiutilGVK(obj, a.scheme)
	if err != nil {
		return
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(obj.GetNamespace())
	u.SetName(obj.GetName())
	a.records.forget(recordKey(u))
}

// Remembered returns how many objects the Applier remembers.
func (a *Applier) Remembered() int { return a.records.len() }

// validate catches locally what the server would reject or misread.
func (a *Applier) validate(u *unstructured.Unstructured) error {
	gvk := u.GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return fmt.Errorf("apiVersion and kind are required")
	}
	if u.GetName() == "" {
		return fmt.Errorf("metadata.name is required (server-side apply cannot use generateName)")
	}
	mapping, err := a.client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		if apimeta.IsNoMatchError(err) {
			return fmt.Errorf("kind %s is not served by the API server: %w", gvk, err)
		}
		return err
	}
	namespaced := mapping.Scope.Name() == apimeta.RESTScopeNameNamespace
	switch {
	case namespaced && u.GetNamespace() == "":
		return fmt.Errorf("metadata.namespace is required: %s is namespaced", gvk.Kind)
	case !namespaced && u.GetNamespace() != "":
		return fmt.Errorf("metadata.namespace %q must be empty: %s is cluster-scoped", u.GetNamespace(), gvk.Kind)
	}
	return nil
}

// readCache reads the live object from the cache, as its typed form when
// the scheme knows it (so the caller's existing typed informer answers).
func (a *Applier) readCache(ctx context.Context, u *unstructured.Unstructured) (client.Object, bool, error) {
	var live client.Object
	if obj, err := a.scheme.New(u.GroupVersionKind()); err == nil {
		if co, ok := obj.(client.Object); ok {
			live = co
		}
	}
	if live == nil {
		pu := &unstructured.Unstructured{}
		pu.SetGroupVersionKind(u.GroupVersionKind())
		live = pu
	}
	err := a.cache.Get(ctx, client.ObjectKey{Namespace: u.GetNamespace(), Name: u.GetName()}, live)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	return live, err == nil, err
}

// kindOfApplyError classifies an apply failure. A field-manager conflict
// (409 with FieldManagerConflict causes) is Invalid, not Conflict: retrying
// the same apply cannot succeed; Force or a change of intent can.
func kindOfApplyError(err error) koperrors.Kind {
	if apierrors.IsConflict(err) && apierrors.HasStatusCause(err, metav1.CauseTypeFieldManagerConflict) {
		return koperrors.Invalid
	}
	return koperrors.KindOf(err)
}

func recordKey(u *unstructured.Unstructured) string {
	gvk := u.GroupVersionKind()
	return gvk.Group + "/" + gvk.Kind + "/" + u.GetNamespace() + "/" + u.GetName()
}

func describe(obj any) koperrors.Object {
	if co, ok := obj.(client.Object); ok {
		return koperrors.ObjectOf(co)
	}
	return koperrors.Object{GroupVersionKind: schema.GroupVersionKind{Kind: fmt.Sprintf("%T", obj)}}
}

// statusKey carries a *int through the request context for statusRecorder.
type statusKey struct{}

// statusRecorder writes the HTTP status of a response into the *int the
// request's context carries: the only way to tell a create from an update
// without a second request.
type statusRecorder struct{ next http.RoundTripper }

func (s statusRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if p, ok := r.Context().Value(statusKey{}).(*int); ok && err == nil {
		*p = resp.StatusCode
	}
	return resp, err
}

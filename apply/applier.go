package apply

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/liveread"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/observability"
)

// Interface is what code that applies needs: [Applier] implements it, and
// so does [Fake], which unit tests use instead of a cluster. reconciler.Env
// holds one.
type Interface interface {
	// Apply server-side applies obj: see [Applier.Apply].
	Apply(ctx context.Context, obj any, opts ...client.ApplyOption) (Result, error)
	// Forget drops what is remembered about obj: see [Applier.Forget].
	Forget(obj client.Object)
	// FieldOwner is the field manager applies are made as by default.
	FieldOwner() string
}

var (
	_ Interface = (*Applier)(nil)
	_ Interface = (*Fake)(nil)
)

// Result is what one [Applier.Apply] did.
type Result struct {
	// Outcome is Created, Updated or Unchanged; the zero Outcome (none of
	// them) when the apply failed.
	Outcome Outcome
	// Requests is the number of API requests the apply sent: 0 when the
	// cache proved the object unchanged, 1 otherwise; 2 for the first apply
	// of an object with a controller reference that the Applier cannot see
	// in a cache (a GET first, see the package documentation on
	// ownership), and for a refused or undone takeover (a dry run, or the
	// apply that undoes it); more only if client-go retried, as after a
	// 429. Set for a failed apply too.
	Requests int

	sent   *unstructured.Unstructured // the server's answer
	live   client.Object              // the cache's copy, when nothing was sent
	gvk    schema.GroupVersionKind    // live's kind
	scheme *runtime.Scheme            // for Into's check of its object's kind
}

// Object returns the object after the apply: the server's answer, or, when
// nothing was sent, the cache's copy (the object the apply would have left,
// with the managedFields the cache keeps: ours only with
// [KeepManagedFields]). The cache's copy is converted to unstructured on
// each call, so call Object once, and only when you need it: an unchanged
// apply that nobody asks the object of costs no conversion. Owned by the
// caller. Nil for a failed apply.
func (r Result) Object() *unstructured.Unstructured {
	switch {
	case r.sent != nil:
		return r.sent
	case r.live == nil:
		return nil
	}
	if u, ok := r.live.(*unstructured.Unstructured); ok {
		return u.DeepCopy()
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r.live)
	if err != nil {
		return nil // not for an object the scheme decoded
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(r.gvk)
	return u
}

// Into sets obj to the object after the apply, as [Result.Object] returns
// it, in obj's own form: a typed object of the result's kind (such as
// *appsv1.Deployment), or an *unstructured.Unstructured. When nothing was
// sent and the cache holds the kind typed, that is a deep copy of the
// cache's copy, without the conversions to unstructured and back that
// Object and a scheme's Convert would cost. Whatever obj held before is
// replaced, not merged. obj is the caller's: changing it changes no other
// result and not the cache. Into fails for a failed apply, and for an obj
// of another kind.
func (r Result) Into(obj client.Object) error {
	gvk := r.gvk
	if r.sent != nil {
		gvk = r.sent.GroupVersionKind()
	}
	if _, ok := obj.(*unstructured.Unstructured); !ok && r.scheme != nil && (r.sent != nil || r.live != nil) {
		if kinds, _, err := r.scheme.ObjectKinds(obj); err == nil && !slices.ContainsFunc(kinds, func(k schema.GroupVersionKind) bool { return k.GroupKind() == gvk.GroupKind() }) {
			return fmt.Errorf("result is a %s, not a %s (%T)", gvk.Kind, kinds[0].Kind, obj)
		}
	}
	switch {
	case r.sent != nil:
		if u, ok := obj.(*unstructured.Unstructured); ok {
			r.sent.DeepCopyInto(u)
			return nil
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(r.sent.Object, obj); err != nil {
			return fmt.Errorf("result of %s %s into %T: %w", r.sent.GetKind(), r.sent.GetName(), obj, err)
		}
		obj.GetObjectKind().SetGroupVersionKind(r.sent.GroupVersionKind())
		return nil
	case r.live == nil:
		return fmt.Errorf("no object: the apply failed")
	}
	dst, src := reflect.ValueOf(obj), reflect.ValueOf(r.live)
	if dst.Type() == src.Type() {
		dst.Elem().Set(reflect.ValueOf(r.live.DeepCopyObject()).Elem())
		obj.GetObjectKind().SetGroupVersionKind(r.gvk)
		return nil
	}
	u := r.Object()
	if u == nil {
		return fmt.Errorf("result of %s %s: cannot convert the cached %T", r.gvk.Kind, r.live.GetName(), r.live)
	}
	return Result{sent: u, scheme: r.scheme}.Into(obj)
}

// Applier applies desired state with server-side apply, and sends nothing
// when the cached object proves that the apply would change nothing: by its
// record of the last apply, or by the object's own managedFields and values
// (see the package documentation). It is safe for concurrent use; one
// Applier per controller (or per manager) is the intended use.
type Applier struct {
	client     client.Client
	mapper     apimeta.RESTMapper
	fieldOwner string
	scheme     *runtime.Scheme
	cache      client.Reader
	records    *records
	scopes     scopes
	metrics    *observability.Metrics
	controller string
	// live reads an object from the API server (readLive), remembering the
	// kinds the Applier may not get.
	live liveread.Reader
}

// New returns an Applier that applies as fieldOwner (required: an empty one
// is an error of Kind Config) and sends its requests with cfg. It builds its
// own client on cfg, whose transport records the HTTP status of each apply,
// so that it can tell a create (201) from an update (200) without a GET. In a
// manager:
//
//	a, err := apply.New(mgr.GetConfig(), "webapp-controller", apply.WithCluster(mgr))
//
// fieldOwner is the field manager of every apply unless one names another
// with client.FieldOwner.
func New(cfg *rest.Config, fieldOwner string, opts ...ApplierOption) (*Applier, error) {
	if fieldOwner == "" {
		return nil, koperrors.Errorf(koperrors.Config, "new applier: a field owner is required")
	}
	if cfg == nil {
		return nil, koperrors.Errorf(koperrors.Config, "new applier: a rest.Config is required")
	}
	c := config{scheme: clientgoscheme.Scheme, maxRecords: defaultMaxRecords}
	for _, o := range opts {
		o(&c)
	}
	if c.scheme == nil {
		return nil, koperrors.Errorf(koperrors.Config, "new applier: the scheme is nil (WithScheme)")
	}
	hc := c.httpClient
	if hc == nil {
		var err error
		if hc, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, koperrors.WrapKind(koperrors.Config, fmt.Errorf("new applier: %w", err), "", kopmeta.ObjectRef{})
		}
	}
	hc = recordingHTTPClient(hc)
	mapper := c.mapper
	if mapper == nil {
		var err error
		if mapper, err = apiutil.NewDynamicRESTMapper(cfg, hc); err != nil {
			return nil, koperrors.WrapKind(koperrors.Config, fmt.Errorf("new applier: %w", err), "", kopmeta.ObjectRef{})
		}
	}
	cl, err := client.New(cfg, client.Options{Scheme: c.scheme, HTTPClient: hc, Mapper: mapper})
	if err != nil {
		return nil, koperrors.WrapKind(koperrors.Config, fmt.Errorf("new applier: %w", err), "", kopmeta.ObjectRef{})
	}
	return &Applier{
		client:     cl,
		mapper:     mapper,
		fieldOwner: fieldOwner,
		scheme:     c.scheme,
		cache:      c.cache,
		records:    newRecords(max(c.maxRecords, 1)),
		metrics:    c.metrics,
		controller: c.controller,
	}, nil
}

// FieldOwner returns the field manager the Applier applies as by default
// (given to [New]).
func (a *Applier) FieldOwner() string { return a.fieldOwner }

// Forget drops what the Applier remembers about obj (only its kind,
// namespace and name matter), as when the caller deleted it. The Applier also
// forgets an object when the cache or the API server shows another UID under
// its name, but not when its cache says it is gone (the cache may not have
// received the Applier's own creation of it yet). To forget every object an
// informer reports deleted, call Forget from the informer's DeleteFunc
// (unwrapping a cache.DeletedFinalStateUnknown).
func (a *Applier) Forget(obj client.Object) {
	gvk, err := gvkOf(obj, a.scheme)
	if err != nil {
		return
	}
	a.records.forget(recordKey{gk: gvk.GroupKind(), namespace: obj.GetNamespace(), name: obj.GetName()})
}

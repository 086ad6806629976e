package apply

import (
	"net/http"
	"reflect"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/kopgo/kopgo/observability"
)

// defaultMaxRecords is how many objects an [Applier] remembers unless
// [WithMaxRecords] says otherwise.
const defaultMaxRecords = 10000

// ApplierOption configures an [Applier] built by [New]. Options apply in
// order; a later one overrides what an earlier one set.
type ApplierOption func(*config)

type config struct {
	scheme     *runtime.Scheme
	cache      client.Reader
	httpClient *http.Client
	mapper     apimeta.RESTMapper
	maxRecords int
	metrics    *observability.Metrics
	controller string
}

// WithCluster makes the Applier work with what a controller-runtime
// cluster (a manager is one) already has: its scheme (to map typed objects
// to kinds), its HTTP client (its connections are shared; the Applier wraps
// its transport to see each response's status code, and does not change
// it), its RESTMapper and its cache, read as by [WithCache]. Without it the
// Applier uses client-go's scheme (the built-in kinds), its own HTTP client
// and discovery-backed RESTMapper, and no cache.
func WithCluster(c cluster.Cluster) ApplierOption {
	return func(o *config) {
		o.scheme, o.httpClient, o.mapper, o.cache = c.GetScheme(), c.GetHTTPClient(), c.GetRESTMapper(), c.GetCache()
	}
}

// WithScheme gives the Applier the scheme that maps typed objects to their
// kinds, and reads the cache in typed form: register your custom resources'
// types in it to apply them as typed objects without a manager (in a CLI, a
// job or a test). The default is client-go's scheme, which knows the
// Kubernetes API's own kinds; [WithCluster] sets the cluster's. Apply
// configurations and *unstructured.Unstructured carry their apiVersion and
// kind and need no scheme, nor does a typed object whose apiVersion and
// kind are set.
func WithScheme(s *runtime.Scheme) ApplierOption { return func(c *config) { c.scheme = s } }

// WithCache gives the Applier a reader of live objects that costs no request:
// a manager's cache or its cached client (after [WithCluster], to read
// through another reader than the cluster's cache). With it, an apply
// that the cached object proves would change nothing sends nothing (see the
// package documentation; [KeepManagedFields] keeps the managedFields entry
// that proof needs after a restart). The reader should serve the kinds you
// apply from informers; a controller-runtime cache starts one on the first
// read of a kind.
func WithCache(r client.Reader) ApplierOption { return func(c *config) { c.cache = r } }

// WithMetrics counts every apply's outcome (dry runs excepted) in
// kopgo_apply_total under the controller name.
func WithMetrics(m *observability.Metrics, controller string) ApplierOption {
	return func(c *config) { c.metrics, c.controller = m, controller }
}

// WithMaxRecords bounds how many objects the Applier remembers (default
// 10,000); the least recently applied are forgotten first. A forgotten
// object costs a check of the cached object the next time, or one apply
// request when that cannot prove it unchanged. Values below 1 mean 1.
func WithMaxRecords(n int) ApplierOption { return func(c *config) { c.maxRecords = n } }

// Force says whether a write takes over fields another field manager owns
// with another value (server-side apply's force; Force(true) is
// client.ForceOwnership). Without force such a field fails the write with a
// conflict (an error of Kind Invalid; for an apply its chain holds a
// [*ConflictError] naming the fields and their managers), and the other
// manager keeps the field.
//
// kopgo forces by default only where it knows the fields are the
// controller's own: the parent's status (status.Patcher.Patch, in
// github.com/kopgo/kopgo/status) and the children reconciler.Sync created,
// which it checks are its own before every apply. [Applier.Apply] does not
// force by default: it cannot tell an object its caller created from one
// that someone else created first under the same name, and forcing would
// take that object's fields (and, with a controller reference in the
// intent, the object itself) without a word. Pass Force(true) or
// client.ForceOwnership where the object is known to be the caller's, and
// Force(false) to opt out where kopgo forces.
//
// Force is a client.ApplyOption and a client.SubResourceApplyOption, so the
// same value serves an apply of an object and of its status, in kopgo and in
// controller-runtime's own client.
type Force bool

var (
	_ client.ApplyOption            = Force(false)
	_ client.SubResourceApplyOption = Force(false)
)

// ApplyToApply implements client.ApplyOption.
func (f Force) ApplyToApply(o *client.ApplyOptions) {
	force := bool(f)
	o.Force = &force
}

// ApplyToSubResourceApply implements client.SubResourceApplyOption.
func (f Force) ApplyToSubResourceApply(o *client.SubResourceApplyOptions) {
	f.ApplyToApply(&o.ApplyOptions)
}

// applyOptions are the options of one apply: the Applier's defaults (its
// field owner, no force) with opts applied over them.
func applyOptions(fieldOwner string, opts []client.ApplyOption) *client.ApplyOptions {
	o := &client.ApplyOptions{FieldManager: fieldOwner}
	return o.ApplyOptions(opts)
}

// forced reports whether o forces field ownership.
func forced(o *client.ApplyOptions) bool { return o.Force != nil && *o.Force }

// dryRun reports whether o asks for a dry run.
func dryRun(o *client.ApplyOptions) bool { return len(o.DryRun) > 0 }

// Current hands the Applier the object of the intent's name as the caller
// has just read it from the manager's cache (or the API server), so that
// the Applier does not read the cache for it again: reconciler.Sync passes
// each child it listed.
//
//	res, err := a.Apply(ctx, intent, apply.Current(observed))
//
// The object must be the one read, unmodified: the Applier's proofs that
// an apply would change nothing (see the package documentation) take it
// for the cache's copy, and the Result may return it. An object of
// another apiVersion, kind, namespace or name than the intent's, or nil, is
// ignored: the cache is read as without it. Current is a client.ApplyOption
// so that it travels with the Applier's other options; controller-runtime's
// own client ignores it.
func Current(obj client.Object) client.ApplyOption { return current{obj: obj} }

// current is the option [Current] returns.
type current struct{ obj client.Object }

// ApplyToApply implements client.ApplyOption; it sets nothing.
func (current) ApplyToApply(*client.ApplyOptions) {}

// givenCurrent returns the object the last [Current] in opts names, when it
// is the intent's object; nil otherwise.
func givenCurrent(opts []client.ApplyOption, in *intent, scheme *runtime.Scheme) client.Object {
	var obj client.Object
	for _, o := range opts {
		if c, ok := o.(current); ok {
			obj = c.obj
		}
	}
	if obj == nil || (reflect.ValueOf(obj).Kind() == reflect.Pointer && reflect.ValueOf(obj).IsNil()) ||
		obj.GetName() != in.name || obj.GetNamespace() != in.namespace {
		return nil
	}
	gvk, err := gvkOf(obj, scheme)
	if err != nil || gvk != in.gvk {
		return nil
	}
	return obj
}

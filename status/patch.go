package status

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// Patcher writes one object's status only when it changed. Take it right
// after reading the object, before changing its status; [Patcher.Patch]
// then compares and sends one server-side apply of the whole status, or
// nothing:
//
//	p := status.NewPatcher(app)
//	app.Status.URL = url
//	status.MarkReady(app, "Deployed", "3/3 replicas ready")
//	sent, err := p.Patch(ctx, c, app, client.FieldOwner("webapp-controller"))
//
// It needs no GET: the object as read is the "before". A Patcher holds a
// copy of the status only, not of the whole object. It is not safe for
// concurrent use; one reconcile uses one Patcher.
type Patcher struct {
	uid             types.UID
	resourceVersion string // of the object as read, then of the last write
	before          any    // the status as read, then as last written, as unstructured data
	err             error  // converting the object failed
}

// NewPatcher snapshots obj's status (and its UID and resourceVersion).
// obj may be an [Accessor] of the object.
func NewPatcher(obj client.Object) *Patcher {
	obj = unwrap(obj)
	before, err := statusOf(obj)
	return &Patcher{uid: obj.GetUID(), resourceVersion: obj.GetResourceVersion(), before: before, err: err}
}

// Patch writes obj's status to its status subresource if it differs from
// the snapshot, and reports whether it sent a request. obj may be an
// [Accessor] of the object.
//
// The request is one server-side apply whose body is obj's apiVersion,
// kind, name, namespace and whole status: scalars and conditions travel
// together, so no write drops a field another write set, and a field or
// condition removed from status since the last Patch is removed from the
// object (it was owned by the field owner and is no longer applied).
//
// The options are controller-runtime's, those of c.Status().Apply. The
// field owner is the default of c when c was made with
// client.WithFieldOwner (as reconciler.Env's Client is), or
// client.FieldOwner; the API server refuses an apply without one (an error
// of Kind Invalid). Ownership of status fields is forced by default (the
// object as read already holds every other writer's values, so forcing
// only takes over fields the controller puts in its own status);
// apply.Force(false) (github.com/kopgo/kopgo/apply) makes a field another
// manager owns with a different value a failure of Kind Invalid that names
// the manager and the field. client.DryRunAll makes the server validate and
// compute the write without persisting it; a dry run is not remembered:
// the next Patch compares against the same snapshot.
//
// Unchanged means equal once converted to JSON-shaped data, so times are
// compared at the second precision the API keeps. When this process wrote
// the object's status since the snapshot's resourceVersion (the cache had
// not yet caught up with that write when the object was read) and the
// status differs from what was written, Patch sends even when obj equals
// the snapshot; when the snapshot is the very version this process' last
// write was based on and the status equals that write, Patch sends
// nothing, though it differs from the snapshot: see "Stale caches" in the
// package documentation.
//
// On success obj's resourceVersion is the one the server returned and the
// Patcher's snapshot becomes the status sent, so a second Patch in the
// same reconcile sends only what changed after the first. Errors name the
// object; their kind is that of the API error (koperrors.KindOf), except a
// field-manager conflict under Force(false), which is Invalid.
func (p *Patcher) Patch(ctx context.Context, c client.Client, obj client.Object, opts ...client.SubResourceApplyOption) (bool, error) {
	obj = unwrap(obj)
	o := kopmeta.RefOf(obj)
	switch {
	case p.err != nil:
		return false, koperrors.WrapKind(koperrors.Serialization, p.err, "read status of", o)
	case p.uid != "" && obj.GetUID() != p.uid:
		return false, koperrors.Errorf(koperrors.Invalid, "patch status of %s: the Patcher was made for the object with UID %s, not %s", o, p.uid, obj.GetUID())
	}
	after, err := statusOf(obj)
	if err != nil {
		return false, koperrors.WrapKind(koperrors.Serialization, err, "read status of", o)
	}
	if !p.mustSend(after) {
		return false, nil
	}
	force := true
	opt := (&client.SubResourceApplyOptions{ApplyOptions: client.ApplyOptions{Force: &force}}).ApplyOpts(opts)
	dryRun := len(opt.DryRun) > 0
	gvk, err := gvkOf(obj, c.Scheme())
	if err != nil {
		return false, koperrors.WrapKind(koperrors.Invalid, err, "patch status of", o)
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if after != nil {
		u.Object["status"] = after
	}
	// else: no status at all, so that the field owner owns no status field.
	// Sending "status: {}" instead makes the server store status: null,
	// which a CRD's schema rejects (kubernetes/kubernetes#117447).
	u.SetGroupVersionKind(gvk)
	u.SetName(obj.GetName())
	u.SetNamespace(obj.GetNamespace())
	if err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opt); err != nil {
		if apierrors.IsConflict(err) && apierrors.HasStatusCause(err, metav1.CauseTypeFieldManagerConflict) {
			return false, koperrors.WrapKind(koperrors.Invalid, err, "patch status of", o)
		}
		return false, koperrors.Wrap(err, "patch status of", o)
	}
	if dryRun {
		return true, nil
	}
	rv := u.GetResourceVersion()
	obj.SetResourceVersion(rv)
	basedOn := p.resourceVersion
	p.before, p.resourceVersion = after, rv
	if uid := u.GetUID(); uid != "" {
		writes.put(lastWrite{uid: uid, resourceVersion: rv, basedOn: basedOn, status: after})
	}
	return true, nil
}

// mustSend decides whether status after must be written. The snapshot is
// the server's status as of the read; the write log knows whether this
// process wrote a status the read did not include yet, or that the read is
// the version our last write started from.
func (p *Patcher) mustSend(after any) bool {
	changed := !equality.Semantic.DeepEqual(p.before, after)
	var last lastWrite
	ok := false
	if p.uid != "" {
		last, ok = writes.get(p.uid)
	}
	switch {
	case !ok:
		return changed
	case last.resourceVersion == p.resourceVersion:
		writes.forget(p.uid) // the read includes our last write
		return changed
	case last.basedOn == p.resourceVersion:
		// The read is the version our last write started from: the server
		// holds what we wrote, whatever the read says.
		return !equality.Semantic.DeepEqual(last.status, after)
	default:
		// The read may predate our last write: an unchanged status is
		// skipped only if that write holds the same.
		return changed || !equality.Semantic.DeepEqual(last.status, after)
	}
}

// statusOf returns obj's .status as unstructured data: nil when it has
// none or an empty one, so that absent, null and {} compare equal.
//
// A typed object's status field is found once per Go type and converted
// alone: converting the whole object (its managedFields and spec
// included) to read its status was the larger part of a converged
// reconcile's CPU.
func statusOf(obj client.Object) (any, error) {
	var st any
	if u, ok := obj.(runtime.Unstructured); ok {
		st = runtime.DeepCopyJSONValue(u.UnstructuredContent()["status"])
	} else {
		var err error
		if st, err = typedStatus(obj); err != nil {
			return nil, fmt.Errorf("convert the status of %T to unstructured: %w", obj, err)
		}
	}
	if m, ok := st.(map[string]any); ok && len(m) == 0 {
		return nil, nil
	}
	return st, nil
}

// statusFields caches, per struct type, the index of the field serialised
// as "status" (-1: none).
var statusFields sync.Map // reflect.Type -> int

func typedStatus(obj client.Object) (any, error) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		return m["status"], err
	}
	v = v.Elem()
	i, ok := statusFields.Load(v.Type())
	if !ok {
		i = statusField(v.Type())
		statusFields.Store(v.Type(), i)
	}
	if i.(int) < 0 {
		return nil, nil
	}
	f := v.Field(i.(int))
	switch f.Kind() {
	case reflect.Pointer:
		if f.IsNil() {
			return nil, nil
		}
		return runtime.DefaultUnstructuredConverter.ToUnstructured(f.Interface())
	case reflect.Struct:
		return runtime.DefaultUnstructuredConverter.ToUnstructured(f.Addr().Interface())
	}
	// Not a struct: convert the whole object, as the API would.
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	return m["status"], err
}

// statusField returns the index of t's exported field whose JSON name is
// "status", or -1.
func statusField(t reflect.Type) int {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == "status" {
			return i
		}
	}
	return -1
}

// gvkOf is obj's kind from the scheme, or from its TypeMeta when the scheme
// does not know its Go type.
func gvkOf(obj client.Object, scheme *runtime.Scheme) (schema.GroupVersionKind, error) {
	set := obj.GetObjectKind().GroupVersionKind()
	if scheme == nil {
		if set.Kind == "" || set.Version == "" {
			return schema.GroupVersionKind{}, fmt.Errorf("no scheme, and %T has no apiVersion and kind", obj)
		}
		return set, nil
	}
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil && set.Kind != "" && set.Version != "" {
		return set, nil
	}
	return gvk, err
}

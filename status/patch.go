package status

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
)

// Writer is what [Patcher.Patch] needs: client.Client satisfies it.
type Writer interface {
	Status() client.SubResourceWriter
	Scheme() *runtime.Scheme
}

// Patcher writes an object's status only when it changed. Take one when the
// object is read, before changing its status; Patch then compares and sends
// one server-side apply of the whole status, or nothing:
//
//	p := status.NewPatcher(app)
//	status.MarkReady(app, "Deployed", "3/3 replicas ready")
//	app.Status.URL = url
//	changed, err := p.Patch(ctx, c, app, "webapp-controller")
//
// It needs no GET: the object as read is the "before".
type Patcher struct {
	before any // the status as read, as unstructured data
	err    error
}

// NewPatcher snapshots obj's status.
func NewPatcher(obj client.Object) *Patcher {
	before, err := statusOf(obj)
	return &Patcher{before: before, err: err}
}

// Patch writes obj's status to the status subresource if it differs from
// the snapshot, as one server-side apply owned by fieldOwner that carries
// every status field (conditions and scalars together, so neither drops the
// other), forcing ownership of those fields. It reports whether it sent a
// request. The status sent is owned by fieldOwner from then on: a field
// removed from status in a later Patch is removed from the object.
func (p *Patcher) Patch(ctx context.Context, c Writer, obj client.Object, fieldOwner string) (bool, error) {
	o := koperrors.ObjectOf(obj)
	if p.err != nil {
		return false, koperrors.Wrap(p.err, "read status", o)
	}
	if fieldOwner == "" {
		return false, koperrors.Errorf(koperrors.Invalid, "patch status of %s: field owner is required", o)
	}
	after, err := statusOf(obj)
	if err != nil {
		return false, koperrors.Wrap(err, "read status", o)
	}
	if equality.Semantic.DeepEqual(p.before, after) {
		return false, nil
	}
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return false, koperrors.WrapKind(koperrors.Invalid, err, "patch status", o)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": after}}
	u.SetGroupVersionKind(gvk)
	u.SetName(obj.GetName())
	u.SetNamespace(obj.GetNamespace())
	if err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return false, koperrors.Wrap(err, "patch status", o)
	}
	if rv := u.GetResourceVersion(); rv != "" {
		obj.SetResourceVersion(rv)
	}
	p.before = after
	return true, nil
}

// statusOf returns obj's .status as unstructured data.
func statusOf(obj client.Object) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return runtime.DeepCopyJSONValue(u.Object["status"]), nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %T: %w", obj, err)
	}
	return m["status"], nil
}

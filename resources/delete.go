package resources

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/scope"
)

// DeleteOptions are the options of [Delete] and [DeleteObject]; set them
// with [DeleteOption] values.
type DeleteOptions struct {
	// Propagation is what happens to the object's dependents. The default
	// is metav1.DeletePropagationBackground: the object goes at once and the
	// garbage collector deletes its dependents afterwards.
	Propagation metav1.DeletionPropagation
	// Precondition, when set, makes the server delete the object only if
	// its UID and resourceVersion (those set) still match.
	Precondition Precondition
	// GracePeriod, when non-nil, overrides the kind's grace period
	// (meaningful for Pods); zero deletes immediately.
	GracePeriod *time.Duration
}

// DeleteOption sets [DeleteOptions].
type DeleteOption interface {
	// ApplyToDeleteOptions sets its option on o.
	ApplyToDeleteOptions(o *DeleteOptions)
}

// Propagation sets how dependents are deleted.
type Propagation metav1.DeletionPropagation

// ApplyToDeleteOptions implements [DeleteOption].
func (p Propagation) ApplyToDeleteOptions(o *DeleteOptions) {
	o.Propagation = metav1.DeletionPropagation(p)
}

const (
	// Background deletes the object at once and its dependents afterwards
	// (the default).
	Background = Propagation(metav1.DeletePropagationBackground)
	// Foreground keeps the object, with a deletionTimestamp and the
	// foregroundDeletion finalizer, until the garbage collector has deleted
	// its blocking dependents.
	Foreground = Propagation(metav1.DeletePropagationForeground)
	// Orphan deletes the object and leaves its dependents.
	Orphan = Propagation(metav1.DeletePropagationOrphan)
)

// Precondition deletes the object only if it is still the one the caller
// knows: same UID (not a re-created object of the same name) and, when
// ResourceVersion is set, unchanged since read. When it does not hold,
// [Delete] returns false and an error of Kind Conflict, and nothing is
// deleted. Empty fields are not checked.
type Precondition struct {
	// UID the object must have; not checked when empty.
	UID types.UID
	// ResourceVersion the object must have; not checked when empty.
	ResourceVersion string
}

// PreconditionOf is the Precondition that obj has its UID (and not its
// resourceVersion: any change but a re-creation is accepted).
func PreconditionOf(obj client.Object) Precondition {
	return Precondition{UID: obj.GetUID()}
}

// ApplyToDeleteOptions implements [DeleteOption].
func (p Precondition) ApplyToDeleteOptions(o *DeleteOptions) { o.Precondition = p }

// GracePeriod sets the grace period of the deletion, rounded up to whole
// seconds (so that 500ms is not a forced, immediate deletion); 0 deletes
// immediately.
type GracePeriod time.Duration

// ApplyToDeleteOptions implements [DeleteOption].
func (g GracePeriod) ApplyToDeleteOptions(o *DeleteOptions) {
	d := time.Duration(g)
	o.GracePeriod = &d
}

// clientOptions translates o into controller-runtime's options.
func (o *DeleteOptions) clientOptions() []client.DeleteOption {
	opts := []client.DeleteOption{client.PropagationPolicy(o.Propagation)}
	if p := o.Precondition; p != (Precondition{}) {
		pre := client.Preconditions{}
		if p.UID != "" {
			pre.UID = &p.UID
		}
		if p.ResourceVersion != "" {
			pre.ResourceVersion = &p.ResourceVersion
		}
		opts = append(opts, pre)
	}
	if o.GracePeriod != nil {
		secs := int64((*o.GracePeriod + time.Second - 1) / time.Second)
		opts = append(opts, client.GracePeriodSeconds(max(secs, 0)))
	}
	return opts
}

// Delete deletes the object of type T called name in scope s, and reports
// whether this call deleted it: an object already gone is (false, nil).
//
//	deleted, err := resources.Delete[corev1.ConfigMap](ctx, c, scope.Namespaced("shop"), "old",
//		resources.Precondition{UID: uid})
//
// "Deleted" means the server accepted the deletion: an object with
// finalizers (or deleted with [Foreground]) stays, with a deletionTimestamp,
// until they are done; [PollUntilGone] waits for that. Deletion propagates
// in the [Background] unless an option says otherwise. A [Precondition]
// that fails is (false, an error of Kind Conflict). The scope is checked
// first, as in [Get]: a wrong scope would otherwise look like an object
// already gone.
func Delete[T any, P Object[T]](ctx context.Context, c Deleter, s scope.Scope, name string, opts ...DeleteOption) (bool, error) {
	obj := P(new(T))
	if s.Namespace() != "" {
		obj.SetNamespace(s.Namespace())
	}
	obj.SetName(name)
	return deleteIn(ctx, c, s, obj, opts)
}

// DeleteObject is [Delete] for an object at hand: its scope is that of its
// namespace (scope.Cluster when empty), checked against its kind, so a
// namespaced object missing its namespace is an error of Kind Invalid, not
// a silent "already gone". Use it for unstructured objects.
func DeleteObject(ctx context.Context, c Deleter, obj client.Object, opts ...DeleteOption) (bool, error) {
	return deleteIn(ctx, c, scope.Of(obj), obj, opts)
}

func deleteIn(ctx context.Context, c Deleter, s scope.Scope, obj client.Object, opts []DeleteOption) (bool, error) {
	o, err := target(c, "delete", s, obj, obj.GetName())
	if err != nil {
		return false, err
	}
	if obj.GetName() == "" {
		return false, koperrors.WrapKind(koperrors.Invalid, fmt.Errorf("no name given"), "delete", o)
	}
	do := DeleteOptions{Propagation: metav1.DeletePropagationBackground}
	for _, opt := range opts {
		opt.ApplyToDeleteOptions(&do)
	}
	err = c.Delete(ctx, obj, do.clientOptions()...)
	switch {
	case err == nil:
		return true, nil
	case koperrors.KindOf(err) == koperrors.NotFound:
		return false, nil
	default:
		return false, koperrors.Wrap(err, "delete", o)
	}
}

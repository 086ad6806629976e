package resources

import (
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// EnsureNamespace creates the namespace name, with labels (which may be
// nil), if it does not exist, and reports whether this call created it. An
// existing namespace is left as it is, labels included (use [SetLabels] to
// change them), and is (false, nil), as is a namespace still being deleted.
//
// It sends one request, a create, whether the namespace exists or not:
// it needs the permission to create namespaces even when they all exist, and
// in exchange it has no read-then-create race.
func EnsureNamespace(ctx context.Context, c client.Writer, name string, labels map[string]string) (bool, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: maps.Clone(labels)}}
	err := c.Create(ctx, ns)
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsAlreadyExists(err):
		return false, nil
	default:
		return false, koperrors.Wrap(err, "ensure", kopmeta.RefOf(ns))
	}
}

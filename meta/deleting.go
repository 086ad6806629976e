package meta

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopgo/kopgo/internal/ownerref"
)

// IsBeingDeleted reports whether obj is being deleted: its
// deletionTimestamp is set, and it stays until its finalizers are removed.
// A nil obj is not being deleted.
//
//	if kopmeta.IsBeingDeleted(app) {
//		return cleanup(ctx, app)
//	}
func IsBeingDeleted(obj metav1.Object) bool {
	return !ownerref.IsNil(obj) && !obj.GetDeletionTimestamp().IsZero()
}

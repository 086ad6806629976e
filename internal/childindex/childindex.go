// Package childindex is the cache index of objects by the UID of their
// controller (the owner reference with controller: true). kopgo's Builder
// adds it for every kind a controller owns, and reconciler.Sync lists a
// parent's children through it, so that a reconcile reads what the parent
// owns rather than every object of the kind in the namespace.
package childindex

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Field is the index's name, for client.MatchingFields{Field: string(uid)}.
const Field = "kopgo.dev/controller-uid"

// Of returns the index value of obj: its controller's UID, if it has one.
func Of(obj client.Object) []string {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return []string{string(ref.UID)}
	}
	return nil
}

// Add indexes every kind in kinds (one example object each) in indexer,
// before the cache starts.
func Add(ctx context.Context, indexer client.FieldIndexer, kinds []client.Object) error {
	for _, k := range kinds {
		if err := indexer.IndexField(ctx, k, Field, Of); err != nil {
			return fmt.Errorf("index %T by controller: %w", k, err)
		}
	}
	return nil
}

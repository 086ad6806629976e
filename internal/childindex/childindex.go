// Package childindex is the cache index of objects by the UID of their
// controller (the owner reference with controller: true). kopgo's Builder
// adds it for every kind a controller owns, and reconciler.Sync lists a
// parent's children through it, so that a reconcile reads what the parent
// owns rather than every object of the kind in the namespace.
//
// Each object has one index value, its controller's UID. A UID names one
// object in the whole cluster, so the index needs no namespace, and Sync
// lists through it without one (a namespaced parent's children are in its
// namespace anyway). controller-runtime's FieldIndexer.IndexField would
// store every value twice, once per namespace and once for a list across
// namespaces: in client-go's index that is a key and a one-element set per
// value, some 370 bytes, 1.1 KiB per parent of three children in the
// bench. Add therefore registers the index on the informers itself, with
// only the across-namespaces value, in the form controller-runtime's cache
// reader looks up for client.MatchingFields without client.InNamespace
// (reconciler's TestIndexListsAcrossNamespaces keeps that form honest).
package childindex

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Field is the index's name, for client.MatchingFields{Field: string(uid)}
// (without client.InNamespace).
const Field = "kopgo.dev/controller-uid"

// indexName and allNamespaces are how controller-runtime's cache reader
// names a field index and the value of a list across namespaces
// (internal.FieldIndexName, internal.KeyToNamespacedKey("", v)).
const (
	indexName     = "field:" + Field
	allNamespaces = "__all_namespaces/"
)

// Of returns the index value of obj: its controller's UID, if it has one.
// It is the value for a client.FieldIndexer (a fake client's WithIndex).
func Of(obj client.Object) []string {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return []string{string(ref.UID)}
	}
	return nil
}

// index is the informer's index function: Of, across namespaces.
func index(o any) ([]string, error) {
	obj, ok := o.(client.Object)
	if !ok {
		return nil, fmt.Errorf("object of type %T is not a client.Object", o)
	}
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return []string{allNamespaces + string(ref.UID)}, nil
	}
	return nil, nil
}

// Add indexes every kind in kinds (one example object each) in the
// informers' caches, before the cache starts. A kind already indexed (by
// another controller on the same manager whose children are of that kind
// too) is left as it is: the index is the same for every controller.
func Add(ctx context.Context, informers cache.Informers, kinds []client.Object) error {
	for _, k := range kinds {
		inf, err := informers.GetInformer(ctx, k)
		if err != nil {
			return fmt.Errorf("index %T by controller: %w", k, err)
		}
		if err := inf.AddIndexers(toolscache.Indexers{indexName: index}); err != nil && !alreadyIndexed(err) {
			return fmt.Errorf("index %T by controller: %w", k, err)
		}
	}
	return nil
}

// alreadyIndexed reports whether err is client-go's refusal of an index
// name the informer has: this index, which only Add registers. Neither
// client-go nor controller-runtime lets a caller ask an informer for its
// indexes first, so the refusal is the answer
// (TestTwoSyncersShareAChildKind keeps its wording honest).
func alreadyIndexed(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "indexer conflict") && strings.Contains(msg, indexName)
}

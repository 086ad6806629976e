package apply

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// KeepManagedFields returns an informer transform that drops every
// managedFields entry except those of fieldOwner, and leaves the object
// otherwise intact. Set it as a controller-runtime cache's transform, so that
// the cached children carry the entry an [Applier] needs to prove, after a
// restart, that an apply would change nothing (see the package
// documentation), and no one else's (which saves heap):
//
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Cache: cache.Options{
//		DefaultTransform: apply.KeepManagedFields("webapp-controller")}})
//
// As a DefaultTransform it trims every cached kind, parents included: code
// that reads other managers' entries from the cache sees none (read such an
// object from the API server, or give its kind a ByObject transform of its
// own).
//
// It works on typed objects, *unstructured.Unstructured and
// *metav1.PartialObjectMetadata, returns anything else unchanged, and may
// run more than once on an object. To combine it with a transform of your
// own, call one after the other in a transform func. A transform that strips
// every managedFields entry (controller-runtime's
// cache.TransformStripManagedFields, set as DefaultTransform or in ByObject,
// which replaces the DefaultTransform for that kind) leaves nothing to prove
// with: the Applier then sends the apply unless it applied the same intent
// to the same resourceVersion itself since it started. It never reports
// Unchanged without a request for lack of managedFields.
func KeepManagedFields(fieldOwner string) toolscache.TransformFunc {
	return func(in any) (any, error) {
		obj, err := apimeta.Accessor(in)
		if err != nil {
			return in, nil //nolint:nilerr // not an object (a tombstone, say): nothing to trim
		}
		entries := obj.GetManagedFields()
		kept := 0
		for _, e := range entries {
			if e.Manager == fieldOwner {
				kept++
			}
		}
		if kept == len(entries) {
			return in, nil
		}
		var own []metav1.ManagedFieldsEntry
		if kept > 0 {
			own = make([]metav1.ManagedFieldsEntry, 0, kept)
			for _, e := range entries {
				if e.Manager == fieldOwner {
					own = append(own, e)
				}
			}
		}
		obj.SetManagedFields(own)
		return in, nil
	}
}

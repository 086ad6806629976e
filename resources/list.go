package resources

import (
	"context"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/scope"
)

// List lists the objects of list type L in scope s: one namespace
// (scope.Namespaced), every namespace (scope.AllNamespaces) or a
// cluster-scoped kind (scope.Cluster):
//
//	cms, err := resources.List[corev1.ConfigMapList](ctx, c, scope.AllNamespaces,
//		client.MatchingLabels{"app": "web"})
//
// opts are controller-runtime's per-call list options, so selectors are
// client.MatchingLabels (a map), client.MatchingLabelsSelector (a
// labels.Selector), client.HasLabels, client.MatchingFields and
// client.MatchingFieldsSelector; client.Limit and client.Continue page. A
// client.InNamespace among opts is overridden by the scope, which is the one
// place the namespace is said. The scope is checked first, as in [Get].
func List[L any, P ObjectList[L]](ctx context.Context, r Reader, s scope.Scope, opts ...client.ListOption) (P, error) {
	list := P(new(L))
	if err := ListInto(ctx, r, s, list, opts...); err != nil {
		return nil, err
	}
	return list, nil
}

// ListInto is [List] that fills list: a typed list, an
// unstructured.UnstructuredList or a metav1.PartialObjectMetadataList with
// its apiVersion and kind set.
func ListInto(ctx context.Context, r Reader, s scope.Scope, list client.ObjectList, opts ...client.ListOption) error {
	o, err := target(r, "list", s, list, "")
	if err != nil {
		return err
	}
	if err := r.List(ctx, list, inScope(s, opts)...); err != nil {
		return koperrors.Wrap(err, "list", o)
	}
	return nil
}

// Keys lists the namespace and name of every object of kind gvk in scope s,
// sorted by namespace then name. It asks for metadata only (a
// metav1.PartialObjectMetadataList), so the server sends no spec, status or
// data: listing the names of Secrets does not download them. gvk is the
// kind of the items, such as corev1.SchemeGroupVersion.WithKind("Secret");
// opts are as in [List].
func Keys(ctx context.Context, r Reader, s scope.Scope, gvk schema.GroupVersionKind, opts ...client.ListOption) ([]types.NamespacedName, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := ListInto(ctx, r, s, list, opts...); err != nil {
		return nil, err
	}
	keys := make([]types.NamespacedName, len(list.Items))
	for i, item := range list.Items {
		keys[i] = types.NamespacedName{Namespace: item.Namespace, Name: item.Name}
	}
	slices.SortFunc(keys, func(a, b types.NamespacedName) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return keys, nil
}

// inScope is opts with the scope's namespace last, so that it wins.
func inScope(s scope.Scope, opts []client.ListOption) []client.ListOption {
	all := append(slices.Clip(opts), s.ListOptions()...)
	if s == scope.AllNamespaces || s == scope.Cluster {
		all = append(all, client.InNamespace(""))
	}
	return all
}

package scope_test

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	deployment  = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	clusterRole = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	namespace   = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	widget      = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
)

// staticMapper knows Deployment (namespaced), ClusterRole and Namespace
// (cluster-scoped), and not Widget. Their group versions are the preferred
// ones, for a lookup without a version.
func staticMapper() apimeta.RESTMapper {
	m := apimeta.NewDefaultRESTMapper([]schema.GroupVersion{
		deployment.GroupVersion(), clusterRole.GroupVersion(), namespace.GroupVersion(),
	})
	m.Add(deployment, apimeta.RESTScopeNamespace)
	m.Add(clusterRole, apimeta.RESTScopeRoot)
	m.Add(namespace, apimeta.RESTScopeRoot)
	return m
}

// errString is err's message, or "" for nil, for comparing with cmp.Diff.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

package scope_test

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/scope"
)

// A wrong scope fails before any request, with the scope to use instead. In
// a program the mapper is the client's: c.RESTMapper().
func ExampleScope_Check() {
	deployment := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	clusterRole := schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(deployment, apimeta.RESTScopeNamespace)
	mapper.Add(clusterRole, apimeta.RESTScopeRoot)

	fmt.Println(scope.Namespaced("web").Check(mapper, deployment))
	fmt.Println(scope.AllNamespaces.Check(mapper, deployment))
	err := scope.Cluster.Check(mapper, deployment)
	fmt.Println(err)
	fmt.Println(koperrors.KindOf(err) == koperrors.Invalid)
	fmt.Println(scope.Namespaced("default").Check(mapper, clusterRole))
	fmt.Println(scope.Namespaced("").Check(mapper, deployment))
	// Output:
	// <nil>
	// <nil>
	// scope Cluster given for namespaced kind apps/v1, Kind=Deployment: use scope.Namespaced(ns) or scope.AllNamespaces
	// true
	// scope Namespaced("default") given for cluster-scoped kind rbac.authorization.k8s.io/v1, Kind=ClusterRole: use scope.Cluster
	// scope Namespaced("") is invalid: name a namespace, or use scope.AllNamespaces for every namespace
}

// CheckObject finds the kind in the scheme; a list is checked for its items.
func ExampleScope_CheckObject() {
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), apimeta.RESTScopeNamespace)

	fmt.Println(scope.AllNamespaces.CheckObject(mapper, &appsv1.DeploymentList{}, clientgoscheme.Scheme))
	fmt.Println(scope.Cluster.CheckObject(mapper, &appsv1.Deployment{}, clientgoscheme.Scheme))
	// Output:
	// <nil>
	// scope Cluster given for namespaced kind apps/v1, Kind=Deployment: use scope.Namespaced(ns) or scope.AllNamespaces
}

func ExampleScope_ApplyTo() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}
	if err := scope.Namespaced("team-a").ApplyTo(cm); err != nil {
		fmt.Println(err)
	}
	fmt.Println(cm.Namespace)
	fmt.Println(scope.Namespaced("team-b").ApplyTo(cm))
	fmt.Println(scope.Cluster.ApplyTo(cm))
	// Output:
	// team-a
	// set scope ConfigMap team-a/settings: metadata.namespace is "team-a" but the scope is Namespaced("team-b")
	// set scope ConfigMap team-a/settings: metadata.namespace is "team-a" but the scope is Cluster
}

func ExampleScope_ListOptions() {
	var opts client.ListOptions
	opts.ApplyOptions(append(scope.Namespaced("team-a").ListOptions(), client.MatchingLabels{"app": "web"}))
	fmt.Printf("namespace %q, labels %q\n", opts.Namespace, opts.LabelSelector)

	opts = client.ListOptions{}
	opts.ApplyOptions(scope.AllNamespaces.ListOptions())
	fmt.Printf("namespace %q\n", opts.Namespace)
	// Output:
	// namespace "team-a", labels "app=web"
	// namespace ""
}

// Of gives the scope of an object read from the API server. Scopes are
// comparable, so they group objects in a map.
func ExampleOf() {
	objs := []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "a"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "b"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
	}
	count := map[scope.Scope]int{}
	for _, obj := range objs {
		count[scope.Of(obj)]++
	}
	fmt.Println(count[scope.Namespaced("team-a")], count[scope.Cluster])
	fmt.Println(scope.Of(objs[0]) == scope.Namespaced("team-a"))
	// Output:
	// 2 1
	// true
}

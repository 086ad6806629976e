package scope_test

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	// metadata.namespace is "team-a" but the scope is Namespaced("team-b")
	// metadata.namespace is "team-a" but the kind is cluster-scoped (scope Cluster)
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

// Of asks the RESTMapper for the scope of a kind; with ApplyTo it checks an
// object's namespace against its kind.
func ExampleOf() {
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), apimeta.RESTScopeNamespace)
	deployment := appsv1.SchemeGroupVersion.WithKind("Deployment")

	s, _ := scope.Of(mapper, deployment, "team-a")
	fmt.Println(s)
	s, _ = scope.Of(mapper, deployment, "")
	fmt.Println(s.ApplyTo(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}}))
	// Output:
	// Namespaced("team-a")
	// scope AllNamespaces cannot place an object: an object of a namespaced kind must name its namespace
}

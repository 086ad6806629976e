package scope_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/scope"
)

func ExampleScope_Check() {
	deployment := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(deployment, apimeta.RESTScopeNamespace)

	fmt.Println(scope.Namespaced("web").Check(mapper, deployment))
	err := scope.Cluster.Check(mapper, deployment)
	fmt.Println(err)
	fmt.Println(koperrors.IsInvalid(err))
	// Output:
	// <nil>
	// scope Cluster given for namespaced kind apps/v1, Kind=Deployment: use scope.Namespaced(ns) or scope.AllNamespaces
	// true
}

func ExampleScope_ApplyTo() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}
	if err := scope.Namespaced("team-a").ApplyTo(cm); err != nil {
		fmt.Println(err)
	}
	fmt.Println(cm.Namespace, scope.Of(cm))
	fmt.Println(scope.Namespaced("team-b").ApplyTo(cm))
	// Output:
	// team-a Namespaced("team-a")
	// set scope ConfigMap team-a/settings: metadata.namespace is "team-a" but the scope is Namespaced("team-b")
}
